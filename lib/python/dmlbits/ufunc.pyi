# dmlbits.ufunc: the operators as numpy.ufunc objects (ufunc.py). The part between the markers
# is written from the operator table by scripts/update-python-stubs.
import numpy as np

# BEGIN OPS
__all__ = ['left_shift', 'right_shift', 'bitwise_and', 'bitwise_or', 'bitwise_xor', 'bitwise_not', 'invert', 'bitwise_count', 'popcount']
left_shift: np.ufunc
right_shift: np.ufunc
bitwise_and: np.ufunc
bitwise_or: np.ufunc
bitwise_xor: np.ufunc
bitwise_not: np.ufunc
invert: np.ufunc
bitwise_count: np.ufunc
popcount: np.ufunc
# END OPS
__all__ += ["UFUNCS"]

UFUNCS: dict[str, np.ufunc]
