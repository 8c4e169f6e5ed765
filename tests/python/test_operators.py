"""The operators on NumPy arrays: names, dtypes, broadcasting, layouts and DirectML's shift rule,
against NumPy (reference.py) and hand-computed values."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck

import dmlbits
from reference import MODELS, NUMPY_NAMES, SHIFT_MODES, expected

# The operator list, what each accepts and its function come from the program's operator table;
# the models and NumPy's names are reference.py's, so that an operator added to the table fails
# here until reference.py covers it.
OPS = dmlbits.ops()["ops"]
BY_VERB = {o["verb"]: o for o in OPS}
FUNCS = {o["verb"]: getattr(dmlbits, o["python_name"]) for o in OPS}
NEWEST = dmlbits.ops()["feature_levels"][-1]
MODES = dmlbits.ops()["shift_overflow_modes"]


def input_types(verb):
    """NumPy names of the dtypes `verb` takes at the newest level ("UINT8" -> "uint8")."""
    support = next(o for o in dmlbits.ops(NEWEST)["ops"] if o["verb"] == verb)["support"]
    return [t.lower() for t in support["input_types"]]


def test_every_operator_has_a_function_and_a_model():
    for o in OPS:
        assert o["verb"] in MODELS, "operator '%s' has no NumPy model in tests/python/reference.py (MODELS): add one" % o["verb"]
        assert o["verb"] in NUMPY_NAMES, \
            "operator '%s' has no expected Python name in tests/python/reference.py (NUMPY_NAMES): add it" % o["verb"]
    assert set(MODES) <= SHIFT_MODES, "a --shift-overflow mode has no NumPy model in tests/python/reference.py"


def output_types(verb):
    """NumPy names of the output types `verb` can give at the newest level (the input's: [])."""
    o = BY_VERB[verb]
    return [] if o["default_output_type"] is None else [t.lower() for t in o["tiers"][-1]["output_types"]]


def test_numpy_names_and_aliases():
    assert dmlbits.invert is dmlbits.bitwise_not
    assert dmlbits.popcount is dmlbits.bitwise_count
    for verb, name in NUMPY_NAMES.items():
        assert BY_VERB[verb]["python_name"] == name
        assert getattr(dmlbits, name).__name__ == name and name in dmlbits.__all__


def data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    raw = rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape)


@pytest.mark.parametrize("verb", sorted(FUNCS))
def test_every_supported_dtype_against_numpy(verb):
    arity = next(o["arity"] for o in OPS if o["verb"] == verb)
    for name in input_types(verb):
        a = data(name, (3, 5), 1)
        b = data(name, (3, 5), 2)
        if BY_VERB[verb]["shift"]:
            b = (b.view(b.dtype) % np.array(70, b.dtype)).astype(b.dtype)
        args = (a, b) if arity == 2 else (a,)
        got = FUNCS[verb](*args)
        want = expected(verb, *args)
        assert got.dtype == want.dtype and got.shape == want.shape, name
        assert got.tobytes() == want.tobytes(), name


def test_zero_d_in_zero_d_out():
    # A NumPy scalar, as NumPy's ufuncs return a 0-d result (test_numpy_expectations.py).
    r = dmlbits.bitwise_and(np.uint32(12), np.uint32(10))
    assert type(r) is np.uint32 and r.shape == () and int(r) == 8
    assert dmlbits.bitwise_count(np.array(-1, np.int8)).shape == ()
    assert dmlbits.bitwise_not(np.array(0, np.uint16)).shape == ()


def test_broadcasting():
    a = np.arange(12, dtype=np.uint16).reshape(3, 1, 4)
    b = np.arange(2, dtype=np.uint16).reshape(2, 1) + 0xF0
    r = dmlbits.bitwise_or(a, b)
    assert r.shape == (3, 2, 4)
    assert r.tobytes() == np.bitwise_or(a, b).tobytes()


def test_literals_take_the_other_operands_dtype():
    a = np.array([1, 2, 3], np.uint8)
    assert dmlbits.bitwise_xor(a, 255).dtype == np.uint8
    assert dmlbits.bitwise_xor(a, 255).tolist() == [254, 253, 252]
    assert dmlbits.bitwise_and(0xF0F0, np.array([0xFFFF], np.uint16)).tolist() == [0xF0F0]
    assert dmlbits.bitwise_or(a, [0x10, 0x20, 0x40]).tolist() == [0x11, 0x22, 0x43]
    assert dmlbits.bitwise_and(a, "0xff").tolist() == [1, 2, 3]  # the CLI's literal syntax
    assert dmlbits.bitwise_and(3, 5, dtype="uint32").dtype == np.uint32
    f = np.array([1.5], np.float32)
    assert dmlbits.bitwise_and(f, 1.5).tobytes() == f.tobytes()
    assert dmlbits.bitwise_and(np.float32(1.5), -0.0).shape == ()  # a Python float stays 0-d


def test_bool_is_read_as_uint8_like_the_cli():
    r = dmlbits.bitwise_not(np.array([True, False]))
    assert r.dtype == np.uint8 and r.tolist() == [254, 255]


def test_floats_are_bit_patterns():
    a = np.array([1.0, -0.0, np.nan], np.float64)
    r = dmlbits.bitwise_xor(a, a)
    assert r.dtype == np.float64 and r.view(np.uint64).tolist() == [0, 0, 0]
    assert dmlbits.bitwise_count(np.array([-0.0], np.float32)).tolist() == [1]


def test_a_python_int_on_a_float_array_is_a_value_and_a_string_is_bits():
    # lib/docs/python.md, difference 2: 0x7fffffff is the int 2147483647, which float32 holds as
    # the value 2147483648.0 (NumPy's conversion); the string "0x7fffffff" is the CLI's hex
    # literal, a bit pattern, as is an array holding those bits.
    a = np.array([-1.5, 2.0, -0.0], np.float32)
    as_value = np.float32(0x7FFFFFFF).view(np.uint32)
    assert as_value == 0x4F000000
    want_value = (a.view(np.uint32) & as_value).view(np.float32)
    want_bits = (a.view(np.uint32) & np.uint32(0x7FFFFFFF)).view(np.float32)
    assert want_value[0] == np.float32(6.3108872e-30) and want_bits.tolist() == [1.5, 2.0, 0.0]  # as the guide says
    assert dmlbits.bitwise_and(a, 0x7FFFFFFF).tobytes() == want_value.tobytes()
    assert dmlbits.bitwise_and(a, "0x7fffffff").tobytes() == want_bits.tobytes()
    assert dmlbits.bitwise_and(a, np.uint32(0x7FFFFFFF).view(np.float32)).tobytes() == want_bits.tobytes()


# DirectML's rule for counts at or past the width (man dmlbits, "Shift counts"), worked by
# hand: up to 32 bits the element is shifted as a 32-bit lane by the count's low 5 bits and cut
# back; 64-bit elements shift by c < 32, else by 32 and then c & 31.
SHIFT_CASES = [
    # dtype, value, count, directml, zero, wrap
    ("uint8", 1, 7, 128, 128, 128),
    ("uint8", 1, 8, 0, 0, 1),
    ("uint8", 1, 31, 0, 0, 128),
    ("uint8", 1, 32, 1, 0, 1),
    ("uint8", 1, 33, 2, 0, 2),
    ("uint16", 0x8001, 16, 0, 0, 0x8001),
    ("uint16", 1, 36, 16, 0, 16),
    ("uint32", 1, 32, 1, 0, 1),
    ("uint32", 1, 33, 2, 0, 2),
    ("uint32", 3, 255, 0x80000000, 0, 0x80000000),
    ("uint64", 1, 32, 1 << 32, 1 << 32, 1 << 32),
    ("uint64", 1, 63, 1 << 63, 1 << 63, 1 << 63),
    ("uint64", 1, 64, 1 << 32, 0, 1),
    ("uint64", 1, 65, 1 << 33, 0, 2),
    ("uint64", 1, (1 << 32) + 1, 2, 0, 2),
    ("uint64", 1, (1 << 32) - 1, 1 << 63, 0, 1 << 63),
]


@pytest.mark.parametrize("dtype,value,count,directml,zero,wrap", SHIFT_CASES)
def test_shift_overflow_rules(dtype, value, count, directml, zero, wrap):
    a = np.array([value], dtype)
    c = np.array([count], dtype)
    assert dmlbits.left_shift(a, c).tolist() == [directml]
    assert dmlbits.left_shift(a, c, shift_overflow="directml").tolist() == [directml]
    assert dmlbits.left_shift(a, c, shift_overflow="zero").tolist() == [zero]
    assert dmlbits.left_shift(a, c, shift_overflow="wrap").tolist() == [wrap]


def test_right_shift_is_logical_and_follows_the_rule():
    assert dmlbits.right_shift(np.array([0x80], np.uint8), np.array([7], np.uint8)).tolist() == [1]
    assert dmlbits.right_shift(np.array([0x80], np.uint8), np.array([8], np.uint8)).tolist() == [0]
    assert dmlbits.right_shift(np.array([0x80], np.uint8), np.array([32], np.uint8)).tolist() == [0x80]
    assert dmlbits.right_shift(np.array([1 << 63], np.uint64), np.array([64], np.uint64)).tolist() == [1 << 31]


def test_popcount_counts_the_pattern_not_the_absolute_value():
    assert dmlbits.bitwise_count(np.array([-1, 1, 0], np.int8)).tolist() == [8, 1, 0]
    r = dmlbits.bitwise_count(np.array([2**64 - 1], np.uint64), out_dtype="uint32")
    assert r.dtype == np.uint32 and r.tolist() == [64]
    assert dmlbits.popcount(np.array([7], np.uint16)).dtype == np.uint8


def test_out_is_written_and_returned():
    a = data("uint32", (4, 4), 3)
    b = data("uint32", (4, 4), 4)
    out = np.empty((4, 4), np.uint32)
    r = dmlbits.bitwise_and(a, b, out=out)
    assert r is out and out.tobytes() == np.bitwise_and(a, b).tobytes()
    dmlbits.bitwise_not(a, out=a)  # in place, as --in-place
    assert a.tobytes() == np.invert(data("uint32", (4, 4), 3)).tobytes()


def test_out_overlapping_an_input_gets_the_right_answer():
    a = np.arange(10, dtype=np.uint8)
    want = np.bitwise_xor(a[1:], a[:-1])
    dmlbits.bitwise_xor(a[1:], a[:-1], out=a[:-1])
    assert a[:-1].tobytes() == want.tobytes()
    b = np.arange(8, dtype=np.uint16)
    dmlbits.bitwise_or(b[::-1].copy(), b, out=b)  # out is B
    assert b.tolist() == [7 | 0, 6 | 1, 5 | 2, 4 | 3, 3 | 4, 2 | 5, 1 | 6, 0 | 7]


def test_large_arrays_run_in_chunks_with_the_same_answer():
    a = data("uint32", (5 << 20,), 5)   # 20 MiB: several chunks
    r = dmlbits.left_shift(a, np.uint32(3))
    assert r.tobytes() == expected("shl", a, np.uint32(3)).tobytes()
    p = dmlbits.bitwise_count(a)
    assert p.tobytes() == expected("popcount", a).tobytes()


def _status_kib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def _peak_growth(call):
    """Bytes the process's resident peak grew by during call() (the results are the library's
    memory, which tracemalloc does not see): writing 5 to clear_refs resets the peak."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    before = _status_kib("VmRSS")
    result = call()
    return (_status_kib("VmHWM") - before) * 1024, result


def test_inputs_are_not_copied_whole_in_any_layout():
    # C order is read in place; Fortran order runs on the transposes (in place too); a strided
    # view and big-endian data are converted a cache-sized chunk at a time (issue 37: each was
    # copied whole into fresh memory first, a second output's worth of memory and time).
    a = data("uint8", (32 << 20,), 6)   # 32 MiB each
    b = data("uint8", (32 << 20,), 7)
    dmlbits.bitwise_and(a[:16], b[:16], backend="cpu")  # warm: caches and the backend
    grew, r = _peak_growth(lambda: dmlbits.bitwise_and(a, b, backend="cpu"))
    assert r.tobytes() == (a & b).tobytes()
    del r
    assert a.nbytes <= grew < a.nbytes + (8 << 20), grew          # the output only
    f = np.asfortranarray(a.reshape(4096, 8192))
    grew_f, r = _peak_growth(lambda: dmlbits.bitwise_not(f, backend="cpu"))
    assert r.tobytes() == (~f).tobytes() and r.flags.f_contiguous
    del r
    assert grew_f < a.nbytes + (8 << 20), grew_f                  # the output only
    doubled = np.repeat(a, 2)
    grew_s, r = _peak_growth(lambda: dmlbits.bitwise_not(doubled[::2], backend="cpu"))
    assert r.tobytes() == (~a).tobytes()
    del r, doubled
    assert grew_s < a.nbytes + (8 << 20), grew_s                  # the output only
    big = a.view(np.uint32).astype(">u4")
    grew_b, r = _peak_growth(lambda: dmlbits.bitwise_not(big, backend="cpu"))
    assert r.dtype == np.uint32 and r.tobytes() == (~a.view(np.uint32)).tobytes()
    del r
    assert grew_b < a.nbytes + (8 << 20), grew_b                  # the output only


LAYOUTS = ["c", "fortran", "big-endian", "strided", "big-endian-fortran"]


def layout(a, how):
    if how == "fortran":
        return np.asarray(a, order="F")  # (np.asfortranarray would make a 0-d array 1-d)
    if how == "big-endian":
        return a.astype(a.dtype.newbyteorder(">"))
    if how == "big-endian-fortran":
        return np.asarray(a.astype(a.dtype.newbyteorder(">")), order="F")
    if how == "strided":
        big = np.zeros(tuple(2 * s for s in a.shape), a.dtype)
        big[tuple(slice(None, None, 2) for _ in a.shape)] = a
        return big[tuple(slice(None, None, 2) for _ in a.shape)]
    return a


@st.composite
def cases(draw):
    verb = draw(st.sampled_from(sorted(FUNCS)))
    dtype = draw(st.sampled_from(input_types(verb)))
    shape = tuple(draw(st.lists(st.integers(0, 5), min_size=0, max_size=4)))
    # B's shape broadcasts against A's: a suffix of it, with some axes set to 1.
    k = draw(st.integers(0, len(shape)))
    b_shape = tuple(1 if draw(st.booleans()) else s for s in shape[len(shape) - k:])
    if draw(st.booleans()):
        shape, b_shape = b_shape, shape
    seed = draw(st.integers(0, 2**32 - 1))
    return (verb, dtype, shape, b_shape, draw(st.sampled_from(LAYOUTS)), draw(st.sampled_from(LAYOUTS)),
            draw(st.sampled_from(MODES)), draw(st.sampled_from(output_types(verb) or [None])), seed)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_property_against_numpy(case):
    verb, dtype, shape, b_shape, la, lb, overflow, out_dtype, seed = case
    a = data(dtype, shape, seed)
    b = data(dtype, b_shape, seed + 1)
    if BY_VERB[verb]["shift"]:
        b = b % np.array(80, b.dtype) if b.size else b
    kw = {}
    if BY_VERB[verb]["shift"]:
        kw["shift_overflow"] = overflow
    if out_dtype is not None:
        kw["out_dtype"] = out_dtype
    if BY_VERB[verb]["arity"] == 1:
        got = FUNCS[verb](layout(a, la), **kw)
        want = expected(verb, a, overflow=overflow, out_dtype=out_dtype)
    else:
        got = FUNCS[verb](layout(a, la), layout(b, lb), **kw)
        want = expected(verb, a, b, overflow=overflow)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_results_are_numpys_own_arrays_at_every_size():
    # Every result is an array NumPy allocated, as np.bitwise_not's would be (issue 37: from
    # 16 KiB up it was the library's tensor, from 128 KiB a 2 MiB huge-page mapping of its own
    # per result, mapped, faulted and unmapped per call).
    small = dmlbits.bitwise_not(np.arange(16, dtype=np.uint32).reshape(4, 4))
    assert small.flags.owndata and small.base is None and small.shape == (4, 4)
    assert small.tolist() == (~np.arange(16, dtype=np.uint32).reshape(4, 4)).tolist()
    for n in (4095, 4096, (32 << 10) - 1, 32 << 10, (32 << 10) + 1, 1 << 18, (1 << 19) + 3):
        a = np.arange(n, dtype=np.uint32)
        for r in (dmlbits.bitwise_not(a), dmlbits.bitwise_xor(a, a[::-1].copy()), dmlbits.bitwise_count(a)):
            assert r.flags.owndata and r.base is None and r.flags.c_contiguous and r.shape == (n,), n
        assert dmlbits.bitwise_not(a).tobytes() == (~a).tobytes()
    assert dmlbits.bitwise_not(np.zeros((0, 3), np.uint8)).shape == (0, 3)


def test_kept_results_hold_their_own_size():
    # 300 results of 128 KiB kept: about 38 MiB of NumPy's memory (issue 37: 600 MiB resident,
    # a huge page each).
    a = np.ones(32 << 10, np.uint32)
    dmlbits.bitwise_not(a)  # warm
    before = _status_kib("VmRSS") * 1024
    kept = [dmlbits.bitwise_not(a) for _ in range(300)]
    grew = _status_kib("VmRSS") * 1024 - before
    assert all(r[0] == 0xFFFFFFFE for r in kept)
    assert grew < 2 * 300 * a.nbytes, grew


@pytest.mark.parametrize("verb", sorted(BY_VERB))
def test_a_call_made_again_computes_its_new_operands(verb):
    # A small call like an accepted one runs the plan that call left on this thread: it must
    # compute the new operands' values, into a new array or into out=, and anything that differs
    # (dtype, shape, options, an out= of another dtype or overlapping an input) takes the full path.
    rng = np.random.default_rng(25)
    f = FUNCS[verb]
    binary = BY_VERB[verb]["arity"] == 2
    for dtype in input_types(verb):
        info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
        for shape in ((4, 4), (3,), ()):
            for _ in range(3):
                a = rng.integers(0, 256, shape).astype(dtype) if info is None else \
                    rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
                b = a[::-1].copy() if a.ndim else a.copy()
                if verb in ("shl", "shr"):
                    b = (b % (8 * a.itemsize + 3)).astype(dtype)  # counts also at and past the width
                args = (a, b) if binary else (a,)
                want = expected(verb, *args)
                got = f(*args)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert got.tobytes() == want.tobytes(), (dtype, shape)
                out = np.full(want.shape, 0x5A, want.dtype)
                assert f(*args, out=out) is out and out.tobytes() == want.tobytes(), (dtype, shape)
                if binary and a.ndim == 2:  # broadcast operands through a plan too
                    for b_part in (b[1], b[2:3, 1:2], b[0, :1]):
                        want_b = expected(verb, a, b_part)
                        assert f(a, b_part).tobytes() == want_b.tobytes(), (dtype, b_part.shape)
                        assert f(b_part, a).tobytes() == expected(verb, b_part, a).tobytes(), (dtype, b_part.shape)
                if verb != "popcount":
                    a_again = a.copy()
                    f(*((a_again, b) if binary else (a_again,)), out=a_again)  # in place: the full path
                    assert a_again.tobytes() == want.tobytes(), (dtype, shape)


def test_more_shapes_than_a_thread_keeps_plans_for():
    # A thread keeps plans for up to 256 calls of different operands (then drops them all and
    # starts again): 300 shapes in turn, three times, each answer computed afresh.
    rng = np.random.default_rng(256)
    arrays = [rng.integers(0, 2**16, n, dtype=np.uint16) for n in range(1, 301)]
    for _ in range(3):
        for a in arrays:
            b = a[::-1].copy()
            assert dmlbits.bitwise_xor(a, b).tobytes() == (a ^ b).tobytes()
