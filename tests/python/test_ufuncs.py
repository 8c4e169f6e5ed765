"""dmlbits.ufunc: the operators as NumPy ufuncs, every method against an oracle.

The oracles: NumPy's own ufuncs where the semantics agree (and, or, xor, not on the bit patterns;
shifts by counts below the width), and otherwise DirectML's rule as reference.py models it, one
element at a time, driven through np.frompyfunc so that NumPy's own method machinery (reduce,
accumulate, reduceat, outer, at) orders the elements. Never dmlbits' own code.
"""

import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dmlbits
from dmlbits import ufunc as U
from reference import UINT, NUMPY_NAMES, bits, expected

OPS = dmlbits.ops()["ops"]
BY_VERB = {o["verb"]: o for o in OPS}
NEWEST = dmlbits.ops()["feature_levels"][-1]
UF = {o["verb"]: getattr(U, o["python_name"]) for o in OPS}
NUMPY_OWN = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor, "not": np.invert,
             "shl": np.left_shift, "shr": np.right_shift}
LOGIC = ("and", "or", "xor")


def input_types(verb):
    support = next(o for o in dmlbits.ops(NEWEST)["ops"] if o["verb"] == verb)["support"]
    return [t.lower() for t in support["input_types"]]


CASES = [(v, t) for v in BY_VERB for t in input_types(v)]
BINARY = [(v, t) for v, t in CASES if BY_VERB[v]["arity"] == 2]
IDS = ["%s-%s" % c for c in CASES]
BIN_IDS = ["%s-%s" % c for c in BINARY]


def rng_bits(shape, dtype, seed, counts=False):
    """Random bit patterns of `dtype` (every pattern, NaNs included, for floats); `counts`: small
    shift counts, a quarter of them at or past the width."""
    r = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    u = r.integers(0, 2 ** (8 * dt.itemsize), size=shape, dtype=UINT[dt.itemsize], endpoint=False)
    if counts:
        width = 8 * dt.itemsize
        u = np.where(r.random(shape) < 0.25, r.integers(width, 2 * width + 40, size=shape),
                     r.integers(0, width, size=shape)).astype(UINT[dt.itemsize])
    return u.view(dt)


def operands(verb, dtype, shape, seed):
    a = rng_bits(shape, dtype, seed)
    b = rng_bits(shape, dtype, seed + 1, counts=BY_VERB[verb]["shift"]) if BY_VERB[verb]["arity"] == 2 else None
    return a, b


def model_element(verb, dtype, out_dtype="uint8"):
    """One element of DirectML's result from bit patterns (Python ints) to a bit pattern."""
    dt = np.dtype(dtype)
    u = UINT[dt.itemsize]

    def f(x, y=None):
        a = np.array([x], u).view(dt)
        b = None if y is None else np.array([y], u).view(dt)
        return int(bits(expected(verb, a, b, out_dtype=out_dtype))[0])
    return f


def model_ufunc(verb, dtype, out_dtype="uint8"):
    return np.frompyfunc(model_element(verb, dtype, out_dtype), BY_VERB[verb]["arity"], 1)


def result_dtype(verb, dtype, out_dtype="uint8"):
    return np.dtype(out_dtype) if BY_VERB[verb]["default_output_type"] else np.dtype(dtype)


def from_objects(r, dt):
    """An object array of bit patterns as an array of `dt`."""
    dt = np.dtype(dt)
    return np.array(r, dtype=object).astype(UINT[dt.itemsize]).view(dt)


def same_bits(actual, expected_):
    actual, expected_ = np.asarray(actual), np.asarray(expected_)
    assert actual.dtype == expected_.dtype, (actual.dtype, expected_.dtype)
    assert actual.shape == expected_.shape, (actual.shape, expected_.shape)
    np.testing.assert_array_equal(bits(actual), bits(expected_))


def numpy_agrees(verb, b):
    """Whether NumPy's own ufunc computes what DirectML does on these operands."""
    if verb in LOGIC or verb == "not":
        return True
    if BY_VERB[verb]["shift"]:
        return b is not None and bool(np.all(bits(b).astype(np.uint64) < 8 * b.dtype.itemsize))
    return False


def numpy_oracle(verb, dtype):
    """NumPy's own ufunc on the bit patterns, as a function of arrays of `dtype`."""
    f = NUMPY_OWN[verb]
    dt = np.dtype(dtype)

    def call(*args, method="__call__", **kw):
        args = [bits(a) if isinstance(a, np.ndarray) and a.dtype == dt else a for a in args]
        r = getattr(f, method)(*args, **kw) if method != "__call__" else f(*args, **kw)
        return np.asarray(r).view(dt) if r is not None else None
    return call


# ---- the objects --------------------------------------------------------------------------------

def test_every_operator_is_a_ufunc_with_a_loop_per_dtype_of_the_table():
    for o in OPS:
        f = getattr(U, o["python_name"])
        assert isinstance(f, np.ufunc) and f.__name__ == o["python_name"]
        assert (f.nin, f.nout) == (o["arity"], 1)
        if o["python_alias"]:
            assert getattr(U, o["python_alias"]) is f
        ins = [np.dtype(t).char for t in input_types(o["verb"])]
        assert sorted({t[0] for t in f.types}) == sorted(ins)
        outs = {t[-1] for t in f.types}
        if o["default_output_type"]:
            assert outs == {np.dtype(t.lower()).char for t in o["tiers"][-1]["output_types"]}
        assert o["verb"] in NUMPY_NAMES and NUMPY_NAMES[o["verb"]] == o["python_name"]
        assert "DirectML" in f.__doc__ and o["verb"] in f.__doc__


def test_identities_as_numpys():
    assert U.bitwise_and.identity == -1 and U.bitwise_or.identity == 0 and U.bitwise_xor.identity == 0
    for name in ("left_shift", "right_shift", "bitwise_not", "bitwise_count"):
        assert getattr(U, name).identity is None


@pytest.mark.parametrize("dtype", input_types("and"))
def test_empty_reduce_gives_the_identity_bits(dtype):
    w = np.dtype(dtype).itemsize
    assert bits(U.bitwise_and.reduce(np.array([], dtype))) == UINT[w](2 ** (8 * w) - 1)
    assert bits(U.bitwise_or.reduce(np.array([], dtype))) == 0
    assert bits(U.bitwise_xor.reduce(np.array([], dtype))) == 0


def test_pickled_by_name():
    for o in OPS:
        f = getattr(U, o["python_name"])
        assert pickle.loads(pickle.dumps(f)) is f


# ---- __call__ -----------------------------------------------------------------------------------

@pytest.mark.parametrize("verb,dtype", CASES, ids=IDS)
def test_call_against_the_model_and_numpy(verb, dtype):
    a, b = operands(verb, dtype, (5, 37), 1)
    args = (a,) if b is None else (a, b)
    r = UF[verb](*args)
    same_bits(r, expected(verb, a, b))
    if verb in NUMPY_OWN:
        b_in = b if b is None or not BY_VERB[verb]["shift"] else (bits(b) % (8 * b.dtype.itemsize)).view(b.dtype)
        args = (a,) if b is None else (a, b_in)
        same_bits(UF[verb](*args), numpy_oracle(verb, dtype)(*args))


@pytest.mark.parametrize("dtype", input_types("popcount"))
def test_popcount_uint32_loop(dtype):
    a = rng_bits((3, 11), dtype, 7)
    same_bits(U.bitwise_count(a, dtype=np.uint32), expected("popcount", a, out_dtype="uint32"))
    same_bits(U.bitwise_count(a, signature=(dtype, "uint32")), expected("popcount", a, out_dtype="uint32"))


@pytest.mark.parametrize("verb,dtype", BINARY, ids=BIN_IDS)
def test_broadcasting_scalars_and_layouts(verb, dtype):
    a, b = operands(verb, dtype, (6, 9, 4), 3)
    layouts = {
        "rows": (a[:, :1, :], b),                    # broadcast a along an axis (step 0)
        "scalar_b": (a, b[0, 0, 0]),                 # a 0-d b: one element repeated
        "scalar_a": (a[0, 0, 0], b),
        "both_scalar": (a[:, :1, :1], b[:, :1, :1][:, [0] * 9]),  # a repeated along axis 1
        "step": (a[::2, ::3], b[1::2, ::3]),          # non-contiguous
        "inner_step": (a[..., ::2], b[..., 1::2]),    # strided innermost: gathered in chunks
        "reversed": (a[::-1], b),
        "fortran": (np.asfortranarray(a), np.asfortranarray(b)),
        "mixed": (np.asfortranarray(a), b),
        "transposed": (a.T, b.T),
        "column": (a[..., :1], b),
        "big_endian": (a.astype(a.dtype.newbyteorder(">")), b),
    }
    for name, (x, y) in layouts.items():
        r = UF[verb](x, y)
        native = [np.asarray(v).astype(np.asarray(v).dtype.newbyteorder("=")) for v in (x, y)]
        same_bits(r, expected(verb, *native))
    # Fortran operands give a Fortran result, as NumPy's order='K' does.
    assert UF[verb](np.asfortranarray(a), np.asfortranarray(b)).flags.f_contiguous


@pytest.mark.parametrize("verb,dtype", CASES, ids=IDS)
def test_out_where_order_casting(verb, dtype):
    a, b = operands(verb, dtype, (4, 33), 5)
    args = (a,) if b is None else (a, b)
    want = expected(verb, a, b)
    out = np.empty_like(want)
    assert UF[verb](*args, out=out) is out
    same_bits(out, want)
    # where=: untouched where False.
    mask = (np.arange(33) % 3 == 0)[None, :] | (np.arange(4) == 1)[:, None]
    out = np.zeros_like(want)
    UF[verb](*args, out=out, where=mask)
    same_bits(out, np.where(mask, want, np.zeros_like(want)))
    # A strided out=, and order='F'.
    big = np.zeros((8, 66), want.dtype)
    UF[verb](*args, out=big[::2, ::2])
    same_bits(big[::2, ::2], want)
    assert bits(big[1::2]).sum() == 0 and bits(big[:, 1::2]).sum() == 0
    r = UF[verb](*args, order="F")
    assert r.flags.f_contiguous
    same_bits(r, want)
    # casting='no' refuses an out of another dtype; the default same_kind casts into a wider one.
    if want.dtype.kind == "u" and want.dtype.itemsize < 8:
        wide = np.empty(want.shape, np.uint64)
        UF[verb](*args, out=wide)
        np.testing.assert_array_equal(wide, want.astype(np.uint64))
        with pytest.raises(TypeError):
            UF[verb](*args, out=wide, casting="no")


@pytest.mark.parametrize("verb,dtype", CASES, ids=IDS)
def test_in_place_and_overlapping_out(verb, dtype):
    a, b = operands(verb, dtype, (3, 70), 9)
    want = expected(verb, a, b)
    if want.dtype != a.dtype:
        return
    x = a.copy()
    UF[verb](*((x,) if b is None else (x, b)), out=x)
    same_bits(x, want)
    if b is not None:
        y = b.copy()
        UF[verb](a, y, out=y)  # out is the second operand
        same_bits(y, want)
        # out overlaps the first operand shifted by one element: NumPy copies what it must.
        z = np.concatenate([a.ravel(), a.ravel()[:1]])
        UF[verb](z[1:], b.ravel(), out=z[:-1])
        same_bits(z[:-1], expected(verb, np.concatenate([a.ravel()[1:], a.ravel()[:1]]), b.ravel()))


def test_mixed_dtypes_promote_as_numpy_and_floats_stay_bits():
    a, b = np.arange(6, dtype=np.uint8), np.arange(6, dtype=np.uint16) * 300
    r = U.bitwise_and(a, b)
    assert r.dtype == np.bitwise_and(a, b).dtype
    np.testing.assert_array_equal(r, np.bitwise_and(a, b))
    assert U.left_shift(np.uint8([1, 2]), 3).dtype == np.uint8  # a Python int takes the array's dtype
    with pytest.raises(TypeError):
        U.bitwise_and(np.uint64([1]), np.int64([1]))  # NumPy's float64: refused, as NumPy refuses it
    with pytest.raises(TypeError):
        U.bitwise_and(np.float32([1]), np.float64([1]))  # converting float32 values would change bits
    with pytest.raises(TypeError):
        U.left_shift(np.int32([1]), np.int32([1]))  # shifts are unsigned only
    f = np.float32([-1.5, 2.0])
    same_bits(U.bitwise_and(f, np.uint32(0x7FFFFFFF).view(np.float32)), np.float32([1.5, 2.0]))
    # bool is computed as uint8, as dmlbits' functions do.
    same_bits(U.invert(np.array([True, False])), np.uint8([254, 255]))
    same_bits(U.bitwise_and(np.array([True, True]), np.array([True, False])), np.uint8([1, 0]))
    same_bits(U.bitwise_count(np.int8([-1])), np.uint8([8]))


def test_directml_shift_rule_not_numpys():
    c = np.uint8([0, 7, 8, 31, 32, 33, 255])
    one = np.ones_like(c)
    same_bits(U.left_shift(one, c), expected("shl", one, c))
    assert U.left_shift(np.uint8(1), np.uint8(32)) == 1  # NumPy gives 0
    assert U.left_shift(np.uint32(1), np.uint32(33)) == 2
    c64 = np.uint64([64, 2 ** 32 - 1, 2 ** 63, 2 ** 64 - 1])
    same_bits(U.right_shift(np.full(4, 2 ** 63, np.uint64), c64), expected("shr", np.full(4, 2 ** 63, np.uint64), c64))


# ---- methods ------------------------------------------------------------------------------------

def oracle_reduce(verb, dtype, a, axis, method="reduce", **kw):
    """The method through np.frompyfunc of the model, on the bit patterns."""
    f = model_ufunc(verb, dtype)
    r = getattr(f, method)(bits(a).astype(object), axis=axis, **kw)
    return from_objects(r, result_dtype(verb, dtype))


@pytest.mark.parametrize("verb,dtype", BINARY, ids=BIN_IDS)
def test_reduce_accumulate_reduceat(verb, dtype):
    a, _ = operands(verb, dtype, (7, 45), 11)
    if BY_VERB[verb]["shift"]:
        a = rng_bits((7, 45), dtype, 11, counts=True)
    for axis in (0, 1, -1):
        same_bits(UF[verb].reduce(a, axis=axis), oracle_reduce(verb, dtype, a, axis))
        same_bits(UF[verb].accumulate(a, axis=axis), oracle_reduce(verb, dtype, a, axis, "accumulate"))
        same_bits(UF[verb].reduce(np.asfortranarray(a), axis=axis), oracle_reduce(verb, dtype, a, axis))
        same_bits(UF[verb].reduce(a[::2, ::3], axis=axis), oracle_reduce(verb, dtype, a[::2, ::3], axis))
    same_bits(UF[verb].reduce(a, axis=0, keepdims=True), oracle_reduce(verb, dtype, a, 0, keepdims=True))
    idx = [0, 3, 3, 10, 44, 20]
    same_bits(UF[verb].reduceat(a, idx, axis=1),
              from_objects(model_ufunc(verb, dtype).reduceat(bits(a).astype(object), idx, axis=1),
                           result_dtype(verb, dtype)))
    if verb in LOGIC:
        # Reorderable: several axes and None; where= with the identity as the start.
        same_bits(UF[verb].reduce(a, axis=None), numpy_oracle(verb, dtype)(a, method="reduce", axis=None))
        same_bits(UF[verb].reduce(a, axis=(0, 1)), numpy_oracle(verb, dtype)(a, method="reduce", axis=(0, 1)))
        where = (np.arange(45) % 4 != 1)[None, :] & (np.arange(7) != 2)[:, None]
        same_bits(UF[verb].reduce(a, axis=0, where=where),
                  numpy_oracle(verb, dtype)(a, method="reduce", axis=0, where=where))
        same_bits(UF[verb].accumulate(a, axis=1), numpy_oracle(verb, dtype)(a, method="accumulate", axis=1))
    else:
        with pytest.raises(ValueError):
            UF[verb].reduce(a, axis=None)  # not reorderable, as NumPy's shifts


@pytest.mark.parametrize("verb,dtype", BINARY, ids=BIN_IDS)
def test_outer_and_at(verb, dtype):
    a, b = operands(verb, dtype, (9,), 13)
    b = b[:5]
    f = model_ufunc(verb, dtype)
    same_bits(UF[verb].outer(a, b), from_objects(f.outer(bits(a).astype(object), bits(b).astype(object)),
                                                 result_dtype(verb, dtype)))
    idx = np.array([0, 2, 2, 8, 0, 5])
    x = a.copy()
    UF[verb].at(x, idx, b[0])
    y = bits(a).astype(object)
    f.at(y, idx, int(bits(b[:1])[0]))
    same_bits(x, from_objects(y, dtype))
    x = a.copy()
    vals = rng_bits(idx.shape, dtype, 17, counts=BY_VERB[verb]["shift"])
    UF[verb].at(x, idx, vals)
    y = bits(a).astype(object)
    f.at(y, idx, bits(vals).astype(object))
    same_bits(x, from_objects(y, dtype))


@pytest.mark.parametrize("verb", ["not", "popcount"])
def test_unary_at(verb):
    for dtype in input_types(verb):
        a = rng_bits((10,), dtype, 21)
        x = a.copy()
        UF[verb].at(x, [1, 1, 4])
        # In the indices' order, each result cast back into x's dtype (popcount's uint8 counts too).
        want = a.copy()
        for i in [1, 1, 4]:
            want[i] = expected(verb, want[i:i + 1])[0]
        same_bits(x, want)


def test_large_reduce_matches_numpy():
    a = np.random.default_rng(5).integers(0, 2 ** 32, size=(64, 1 << 16), dtype=np.uint32)
    np.testing.assert_array_equal(U.bitwise_or.reduce(a, axis=0), np.bitwise_or.reduce(a, axis=0))
    np.testing.assert_array_equal(U.bitwise_xor.reduce(a, axis=1), np.bitwise_xor.reduce(a, axis=1))
    np.testing.assert_array_equal(U.bitwise_and.reduce(a, axis=None), np.bitwise_and.reduce(a, axis=None))


def test_threads_on_long_runs_match_numpy():
    # 8 MiB operands: past the thread rule's 4 MiB, so the run is split over threads.
    a = np.random.default_rng(6).integers(0, 2 ** 32, size=1 << 21, dtype=np.uint32)
    b = np.random.default_rng(7).integers(0, 2 ** 32, size=1 << 21, dtype=np.uint32)
    np.testing.assert_array_equal(U.bitwise_xor(a, b), np.bitwise_xor(a, b))
    same_bits(U.bitwise_count(a), expected("popcount", a))
    c = (b % 40).astype(np.uint32)
    same_bits(U.right_shift(a, c), expected("shr", a, c))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(BINARY), st.integers(1, 5), st.integers(1, 40), st.integers(0, 2 ** 31),
       st.sampled_from(["C", "F", "step", "bcast"]))
def test_property_call(case, rows, cols, seed, layout):
    verb, dtype = case
    a, b = operands(verb, dtype, (rows, cols * 2), seed)
    if layout == "F":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    elif layout == "step":
        a, b = a[:, ::2], b[:, 1::2]
    elif layout == "bcast":
        a, b = a[:, :1], b
    same_bits(UF[verb](a, b), expected(verb, np.asarray(a), np.asarray(b)))
    if numpy_agrees(verb, b):
        same_bits(UF[verb](a, b), numpy_oracle(verb, dtype)(np.ascontiguousarray(a), np.ascontiguousarray(b)))


# ---- dispatch -----------------------------------------------------------------------------------

def test_dask_dispatch_is_lazy():
    da = pytest.importorskip("dask.array")
    x = np.arange(1000, dtype=np.uint32)
    y = np.uint32(3) * np.arange(1000, dtype=np.uint32)
    dx, dy = da.from_array(x, chunks=300), da.from_array(y, chunks=250)
    r = U.bitwise_xor(dx, dy)
    assert isinstance(r, da.Array) and r.dtype == np.uint32
    np.testing.assert_array_equal(r.compute(), np.bitwise_xor(x, y))
    s = U.left_shift(dx, np.uint32(33))  # DirectML's rule on every block
    np.testing.assert_array_equal(s.compute(), expected("shl", x, np.uint32(33)))
    c = U.bitwise_count(dx)
    assert isinstance(c, da.Array) and c.dtype == np.uint8
    same_bits(c.compute(), expected("popcount", x))


def test_xarray_dispatch_keeps_the_dataarray():
    xr = pytest.importorskip("xarray")
    x = np.arange(12, dtype=np.uint16).reshape(3, 4)
    d = xr.DataArray(x, dims=("row", "col"), coords={"row": [10, 20, 30]})
    r = U.bitwise_and(d, np.uint16(6))
    assert isinstance(r, xr.DataArray) and r.dims == ("row", "col")
    np.testing.assert_array_equal(r.values, x & 6)
    assert list(r.coords["row"].values) == [10, 20, 30]
    n = U.invert(d)
    assert isinstance(n, xr.DataArray)
    np.testing.assert_array_equal(n.values, ~x)
