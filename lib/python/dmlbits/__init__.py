"""dmlbits: DirectML's element-wise bitwise operators on NumPy arrays, in process.

NumPy's names with DirectML's semantics and the dmlbits CLI's answers, bit for bit::

    >>> import numpy as np, dmlbits
    >>> dmlbits.bitwise_and(np.array([12, 10], np.uint32), 6)
    array([4, 2], dtype=uint32)
    >>> dmlbits.left_shift(np.uint32(1), np.uint32(32))       # DirectML's rule, not NumPy's 0
    1

Operators: NumPy's names for DirectML's (``dmlbits.OPERATORS`` lists them with their aliases;
``ops()`` is the table they are made from). Keywords, as the CLI's options: backend ("auto", "cpu", "d3d12",
"cpu-reference"), feature_level ("6_4", "4.1"), shift_overflow ("directml", "zero", "wrap"),
out_dtype (bitwise_count: "uint8" or "uint32"), threads, isa, adapter, dtype (for literals),
out= (a writeable array of the result's dtype and shape; it is returned), timing=True (returns
(result, timing) as --time-json), repeat, warmup.

Expressions of the operators as one graph: evaluate("popcount(a ^ b)", {"a": x, "b": y}).

The operators as NumPy ufuncs (reduce, accumulate, where=, Dask and xarray dispatch): dmlbits.ufunc.

Also: explain, explain_expression, ops, devices, read_tensor, write_tensor, check, and dmlbits.testing.
Errors raise dmlbits.Error subclasses carrying the CLI's message and exit status.
Linux only. Every difference from NumPy's functions, with examples: lib/docs/python.md in the
source tree.
"""

from ._errors import (Error, UsageError, InvalidInputError, UnsupportedError, FileError,
                      BackendError, InternalError, MismatchError, error_for_code as _error_for_code)
from . import _dmlbits
from ._core import OPERATORS
from . import ufunc
from ._core import explain, evaluate, explain_expression, ops, devices, read_tensor, write_tensor, check, CaseResult, CheckResult

# The operators' functions (bitwise_and, ..., and their aliases), made from the operator table.
globals().update(OPERATORS)

__version__ = _dmlbits.version()

for _code, _status, _description in _dmlbits.errc_table():
    if _error_for_code(_code) is not Error:
        _error_for_code(_code).exit_status = _status
del _code, _status, _description

__all__ = list(OPERATORS) + ["OPERATORS", "explain", "evaluate", "explain_expression", "ops", "devices", "read_tensor", "write_tensor", "check", "CaseResult",
                              "CheckResult", "Error", "UsageError", "InvalidInputError", "UnsupportedError",
                              "FileError", "BackendError", "InternalError", "MismatchError", "testing", "ufunc"]


def __getattr__(name):
    # dmlbits.testing without importing it up front.
    if name == "testing":
        import importlib
        return importlib.import_module(".testing", __name__)
    raise AttributeError(f"module 'dmlbits' has no attribute '{name}'")
