"""The operators as NumPy ufuncs: ``dmlbits.ufunc.bitwise_and`` ... ``bitwise_count``, and the
aliases ``invert`` and ``popcount``.

Genuine ``numpy.ufunc`` objects with DirectML's semantics at the newest feature level (logical
shifts with DirectML's rule for counts at or past the width, popcount of the stored bits into
uint8, floats as bit patterns), made from the operator table, so that NumPy's machinery applies:
broadcasting, ``out=``, ``where=``, ``casting=``, ``dtype=``, ``order=``, ``reduce`` (and's
identity all ones, or's and xor's 0), ``accumulate``, ``reduceat``, ``outer``, ``at``, and
dispatch through ``__array_ufunc__`` (a Dask array gives a lazy Dask array, an xarray DataArray a
DataArray)::

    >>> import numpy as np
    >>> from dmlbits import ufunc
    >>> ufunc.bitwise_or.reduce(np.array([[1, 2], [4, 8]], np.uint32), axis=0)
    array([ 5, 10], dtype=uint32)

They sit beside ``dmlbits.bitwise_and`` and the others rather than replacing them: a ufunc takes
NumPy's keywords only (no ``backend=``, ``feature_level=``, ``shift_overflow=``, ``out_dtype=``,
``timing=``), and resolves types as NumPy does where those functions keep DirectML's one-dtype
rule and the CLI's messages. lib/docs/python.md, "NumPy ufuncs", says what differs.
"""

import struct

from . import _dmlbits


class _AllOnes:
    """bitwise_and's identity: -1 as an integer (all ones in every integer dtype, as NumPy's
    bitwise_and's identity is) and, as a float, the NaN whose 64 bits are all set, which NumPy's
    conversions to float32 and float16 keep as all ones: a plain -1 would start a float32 reduce
    from -1.0's bits (0xbf800000). Not an int subclass: NumPy 1.24 warns when it converts a
    negative int to an unsigned dtype, and converts other objects through __int__ silently."""

    def __int__(self):
        return -1

    __index__ = __int__

    def __float__(self):
        return struct.unpack("<d", b"\xff" * 8)[0]

    def __eq__(self, other):
        return other == -1

    def __hash__(self):
        return hash(-1)

    def __repr__(self):
        return "-1"

    def __reduce__(self):
        return (_AllOnes, ())


# (name, alias, ufunc) per operator, in the operator table's order.
_TABLE = _dmlbits.ufuncs(_AllOnes())
UFUNCS = {}
for _name, _alias, _f in _TABLE:
    UFUNCS[_name] = _f
    if _alias:
        UFUNCS[_alias] = _f
globals().update(UFUNCS)
del _name, _alias, _f

__all__ = list(UFUNCS) + ["UFUNCS"]
