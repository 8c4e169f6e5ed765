"""What DirectML computes, written with NumPy (Debian's python3-numpy) for the tests: the
expected values come from here and from the man page's rules, never from dmlbits."""

import numpy as np

UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def bits(a):
    """The array's bit patterns as unsigned integers of the same width."""
    a = np.asarray(a)
    a = np.asarray(a, order="C")  # (np.ascontiguousarray would make a 0-d array 1-d)
    return a.view(UINT[a.dtype.itemsize]) if a.dtype.kind != "b" else a.view(np.uint8)


def _shift(a, b, overflow, left):
    width = a.dtype.itemsize * 8
    v = bits(a).astype(np.uint64)
    c = bits(b).astype(np.uint64)
    v, c = np.broadcast_arrays(v, c)
    by = (lambda x, n: np.left_shift(x, n)) if left else (lambda x, n: np.right_shift(x, n))
    mask = np.uint64((1 << width) - 1)
    if overflow == "zero":
        r = np.where(c >= width, np.uint64(0), by(v, np.minimum(c, np.uint64(width - 1))) & mask)
    elif overflow == "wrap":
        r = by(v, c % np.uint64(width)) & mask
    else:  # directml (man dmlbits, "Shift counts")
        if width <= 32:
            r = (by(v, c & np.uint64(31)) & np.uint64(0xFFFFFFFF)) & mask
        else:
            lo = c & np.uint64(0xFFFFFFFF)
            r = np.where(lo < 32, by(v, np.minimum(lo, np.uint64(31))),
                         by(by(v, np.uint64(32)), lo & np.uint64(31)))
    return r.astype(UINT[a.dtype.itemsize]).view(a.dtype)


def _logic(f):
    def model(a, b, overflow, out_dtype):
        return f(bits(a), bits(b)).view(a.dtype) if a.dtype.kind != "b" else f(bits(a), bits(b))
    return model


def _not(a, b, overflow, out_dtype):
    return np.invert(bits(a)).view(a.dtype) if a.dtype.kind != "b" else np.invert(bits(a))


def _popcount(a, b, overflow, out_dtype):
    u = bits(a)
    flat = u.reshape(-1)  # (a 0-d array cannot be viewed as bytes)
    counts = np.unpackbits(flat.view(np.uint8).reshape(flat.shape + (u.dtype.itemsize,)), axis=-1).sum(axis=-1)
    return counts.astype(out_dtype).reshape(u.shape)


# The NumPy model of each operator, by verb; test_operators.py fails for an operator the program
# lists without one here.
MODELS = {
    "and": _logic(np.bitwise_and),
    "or": _logic(np.bitwise_or),
    "xor": _logic(np.bitwise_xor),
    "not": _not,
    "popcount": _popcount,
    "shl": lambda a, b, overflow, out_dtype: _shift(a, np.asarray(b), overflow, True),
    "shr": lambda a, b, overflow, out_dtype: _shift(a, np.asarray(b), overflow, False),
}
# NumPy's name of each operator where NumPy has the operation (numpy.bitwise_count is NumPy 2's),
# an expectation of its own: the module's functions, made from the operator table, must carry it.
NUMPY_NAMES = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "not": "bitwise_not",
               "popcount": "bitwise_count", "shl": "left_shift", "shr": "right_shift"}
# The --shift-overflow modes _shift computes.
SHIFT_MODES = {"directml", "zero", "wrap"}


def expected(op, a, b=None, overflow="directml", out_dtype="uint8"):
    assert op in MODELS, "operator '%s' has no NumPy model in tests/python/reference.py (MODELS): add one" % op
    return MODELS[op](np.asarray(a), b, overflow, out_dtype)
