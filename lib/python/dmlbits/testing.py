"""Golden checks in pytest: bit-exact comparison with the CLI's --expect report."""

import os

from . import _dmlbits
from ._errors import MismatchError

__all__ = ["assert_bits_equal"]


def assert_bits_equal(actual, expected, /, *, max_listed=10, label=None):
    """Asserts that ``actual`` and ``expected`` have the same dtype, shape and bits.

    Bits, not values: NaNs are equal only with the same payload, and -0.0 differs from 0.0.
    ``expected`` is an array or the path of a golden file (.npy or JSON, read as the CLI reads
    it). On a difference raises MismatchError (an AssertionError) whose message is the report of
    the CLI's ``--expect``: dtype or shape first, else the first ``max_listed`` differing elements
    with their index, both values in decimal and hex, their xor and the number of differing bits.
    """
    if isinstance(expected, (str, os.PathLike)):
        path = os.fspath(expected)
        if label is None:
            label = f"'{path}'"
        expected = _dmlbits.read_golden(path)
    equal, report = _dmlbits.compare(actual, expected, int(max_listed), label or "expected")
    if not equal:
        raise MismatchError(report.rstrip("\n"))
