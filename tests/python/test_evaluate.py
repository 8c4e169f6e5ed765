"""dmlbits.evaluate and dmlbits.dask.evaluate (issue #46): an expression of the operators as one
graph. Expected values are the same expressions written with NumPy's operators and the
reference models (reference.py), never dmlbits' own answers."""

import re

import dask.array as da
import numpy as np
import pytest

import dmlbits
import dmlbits.dask as dd
from reference import expected

RNG = np.random.default_rng(46)
X8 = RNG.integers(0, 256, (5, 7), dtype=np.uint8)
Y8 = RNG.integers(0, 256, (5, 7), dtype=np.uint8)
GLOBAL_OPERAND = np.array([0x0F, 0xF0, 0xFF], np.uint8)  # found in the module's globals


def popcount(a, out_dtype="uint8"):
    return expected("popcount", a, out_dtype=out_dtype)


@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.uint32, np.int64])
def test_values_are_numpys_for_the_same_expressions(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, (4, 6), dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, (4, 6), dtype=dtype, endpoint=True)
    row = RNG.integers(info.min, info.max, (6,), dtype=dtype, endpoint=True)
    d = {"a": a, "b": b}
    np.testing.assert_array_equal(dmlbits.evaluate("popcount(a ^ b)", d), popcount(a ^ b))
    assert dmlbits.evaluate("popcount(a ^ b)", d).dtype == np.uint8
    r = dmlbits.evaluate("popcount(a ^ b)", d, out_dtype="uint32")
    assert r.dtype == np.uint32
    np.testing.assert_array_equal(r, popcount(a ^ b, "uint32"))
    np.testing.assert_array_equal(dmlbits.evaluate("a & ~b", d), a & ~b)
    # A literal takes the dtype of the operand it meets; shifts (unsigned types only, as
    # DirectML's) by DirectML's rule (3 < width).
    if info.min == 0:
        np.testing.assert_array_equal(dmlbits.evaluate("(a >> 3) & 0x7f", {"a": a}),
                                      expected("shr", a, np.array(3, dtype)) & dtype(0x7F))
    # A shared subexpression, computed once, means what it says.
    np.testing.assert_array_equal(dmlbits.evaluate("(a ^ b) & ~(a ^ b) | (a ^ b) & b", d),
                                  (a ^ b) & ~(a ^ b) | (a ^ b) & b)
    # A broadcast: (4, 6) with (6,).
    np.testing.assert_array_equal(dmlbits.evaluate("a ^ row", {"a": a, "row": row}), a ^ row)
    # Functions by verb and by NumPy's name, in any case.
    np.testing.assert_array_equal(dmlbits.evaluate("XOR(bitwise_and(a, b), bitwise_not(b))", d), (a & b) ^ ~b)


def test_literals_from_python_and_in_the_text():
    a = np.array([[1, 2, 3], [250, 251, 252]], np.uint8)
    np.testing.assert_array_equal(dmlbits.evaluate("a ^ [1, 2, 3]"), a ^ np.array([1, 2, 3], np.uint8))
    np.testing.assert_array_equal(dmlbits.evaluate("a ^ k", {"k": [1, 2, 3]}), a ^ np.array([1, 2, 3], np.uint8))
    np.testing.assert_array_equal(dmlbits.evaluate("a ^ k", {"k": (1, 2, 3)}), a ^ np.array([1, 2, 3], np.uint8))
    np.testing.assert_array_equal(dmlbits.evaluate("a & k", {"k": 0xF0}), a & np.uint8(0xF0))
    np.testing.assert_array_equal(dmlbits.evaluate("a & k", {"k": "0x0f"}), a & np.uint8(0x0F))
    np.testing.assert_array_equal(dmlbits.evaluate("a & k", {"k": True}), a & np.uint8(1))
    # A float is its exact value in the other operand's dtype: 1 + 2**-24 rounds to 1.0f as
    # np.float32 rounds it (even), so its bits and 1.0f's agree.
    f = np.array([1.0, 2.0, -0.0], np.float32)
    got = dmlbits.evaluate("f ^ k", {"f": f, "k": 1 + 2.0**-24})
    np.testing.assert_array_equal(got.view(np.uint32), f.view(np.uint32) ^ np.float32(1.0).view(np.uint32))
    # Numbers only: dtype= gives the dtype; a 0-d result is a NumPy scalar, as a ufunc's.
    r = dmlbits.evaluate("a | b", {"a": 5, "b": 0x30}, dtype="uint16")
    assert r == 0x35 and r.dtype == np.uint16 and np.ndim(r) == 0
    r = dmlbits.evaluate("a & b", {"a": np.float32(1.5), "b": 1.5})
    assert np.ndim(r) == 0 and r.dtype == np.float32 and r == np.float32(1.5)
    # Anything np.asarray takes: a NumPy scalar, a memoryview.
    assert dmlbits.evaluate("a ^ b", {"a": np.uint8(5), "b": 3}) == 6
    mv = memoryview(np.array([1, 2], np.uint32))
    np.testing.assert_array_equal(dmlbits.evaluate("a << 1", {"a": mv}), np.array([2, 4], np.uint32))


def test_names_come_from_the_dict_then_the_callers_locals_then_its_globals():
    a = np.array([1, 2, 4], np.uint8)
    b = np.array([3, 3, 3], np.uint8)
    np.testing.assert_array_equal(dmlbits.evaluate("a | b"), a | b)
    # The dict before the locals, the locals before the globals.
    np.testing.assert_array_equal(dmlbits.evaluate("a | b", {"b": np.uint8(0x80)}), a | np.uint8(0x80))
    np.testing.assert_array_equal(dmlbits.evaluate("a ^ GLOBAL_OPERAND"), a ^ GLOBAL_OPERAND)

    def inner():
        c = np.array([8, 8, 8], np.uint8)
        return dmlbits.evaluate("c | 1")  # inner's own frame, not the test's
    np.testing.assert_array_equal(inner(), np.array([9, 9, 9], np.uint8))


def test_out_is_written_and_returned():
    a, b = X8, Y8
    out = np.empty_like(a)
    assert dmlbits.evaluate("a ^ b", out=out) is out
    np.testing.assert_array_equal(out, a ^ b)
    # out= over an operand: computed into memory of its own first, then copied.
    c = a.copy()
    assert dmlbits.evaluate("popcount(c) ^ c", out=c) is c
    np.testing.assert_array_equal(c, popcount(a) ^ a)
    # A strided and a big-endian out, written as NumPy writes them.
    big = np.zeros((5, 14), np.uint8)
    dmlbits.evaluate("a & b", out=big[:, ::2])
    np.testing.assert_array_equal(big[:, ::2], a & b)
    np.testing.assert_array_equal(big[:, 1::2], 0)
    w = np.arange(6, dtype=np.uint32)
    be = np.zeros(6, ">u4")
    dmlbits.evaluate("w << 4", out=be)
    np.testing.assert_array_equal(be, w << 4)


def test_fortran_and_non_contiguous_operands():
    base = RNG.integers(0, 2**16, (6, 8), dtype=np.uint16)
    f = np.asfortranarray(base)
    strided = RNG.integers(0, 2**16, (6, 16), dtype=np.uint16)[:, ::2]
    reversed_ = base[::-1, ::-1]
    np.testing.assert_array_equal(dmlbits.evaluate("f & strided | reversed_"), f & strided | reversed_)
    np.testing.assert_array_equal(dmlbits.evaluate("t ^ 1", {"t": f.T}), f.T ^ np.uint16(1))
    be = base.astype(">u2")
    np.testing.assert_array_equal(dmlbits.evaluate("be ^ base"), np.zeros_like(base))


@pytest.mark.parametrize("mode", ["directml", "zero", "wrap"])
def test_shift_overflow_applies_to_every_shift(mode):
    a = np.array([1, 0x80, 0xFF, 3], np.uint8)
    n = np.array([1, 8, 9, 33], np.uint8)
    got = dmlbits.evaluate("(a << n) | (a >> n)", shift_overflow=mode)
    want = expected("shl", a, n, overflow=mode) | expected("shr", a, n, overflow=mode)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("backend", ["cpu", "cpu-reference", "d3d12"])
def test_every_backend_on_every_layout_against_numpy_and_cpu_reference(backend):
    # Operands in the layouts NumPy gives (C, Fortran, strided, reversed, big-endian, 0-d, a
    # broadcast row and column) and literals; each result equal to NumPy's and to cpu-reference's
    # (the second oracle), bit for bit.
    base = RNG.integers(0, 2**32, (6, 10), dtype=np.uint32)
    env = {"c": base, "f": np.asfortranarray(base[::-1]), "s": RNG.integers(0, 2**32, (6, 20), np.uint32)[:, ::2],
           "r": base[::-1, ::-1], "be": base.T.T.astype(">u4"), "z": np.uint32(0x0F0F0F0F),
           "row": RNG.integers(0, 2**32, (10,), np.uint32), "col": RNG.integers(0, 2**32, (6, 1), np.uint32)}
    cases = {
        "popcount(c ^ f, out_dtype=uint32) | (s >> 3)":
            popcount(env["c"] ^ env["f"], "uint32") | expected("shr", env["s"], np.uint32(3)),
        "(r & ~be) ^ (z << 4)": (env["r"] & ~env["be"]) ^ expected("shl", env["z"], np.uint32(4)),
        "((row & col) >> 7) | [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]":
            expected("shr", env["row"] & env["col"], np.uint32(7)) | np.arange(1, 11, dtype=np.uint32),
        "popcount(c & 0xff00ff00 ^ row)": popcount(env["c"] & np.uint32(0xFF00FF00) ^ env["row"]),
    }
    for text, want in cases.items():
        names = {k: v for k, v in env.items() if re.search(r"\b%s\b" % k, text)}  # a binding unused is refused
        got = dmlbits.evaluate(text, names, backend=backend)
        assert got.dtype == want.dtype and got.shape == want.shape, text
        np.testing.assert_array_equal(got, want, text)
        np.testing.assert_array_equal(got, dmlbits.evaluate(text, names, backend="cpu-reference"), text)


def test_every_keyword():
    a, b = X8, Y8
    want = popcount(a & b, "uint32")
    for kw in [dict(backend="cpu"), dict(backend="cpu-reference"), dict(backend="cpu", threads=1),
               dict(backend="cpu", isa="scalar"), dict(feature_level="6_4"), dict(feature_level=6.4),
               dict(backend="d3d12", adapter="0"), dict(repeat=3, warmup=1)]:
        np.testing.assert_array_equal(dmlbits.evaluate("popcount(a & b)", out_dtype="uint32", **kw), want, str(kw))
    r, timing = dmlbits.evaluate("popcount(a & b)", out_dtype=np.uint32, timing=True, repeat=2)
    np.testing.assert_array_equal(r, want)
    assert timing["execute_runs"] == 2 and "phases" in timing
    g = dmlbits.explain_expression("popcount(a & b)", out_dtype="uint32")
    assert g["expression"] == "popcount(a & b)" and g["output"]["dtype"] == "UINT32"
    assert [i["name"] for i in g["inputs"]] == ["a", "b"] and g["output"]["shape"] == list(a.shape)
    # dtype= for the literals that meet no array.
    assert dmlbits.evaluate("x ^ 0xff", {"x": 1}, dtype=np.int16) == np.int16(0xFE)


def test_refusals_are_dmlbits_errors_with_the_place():
    a = np.arange(4, dtype=np.uint8)
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.evaluate("a ^")
    assert str(e.value) == ("expression: the expression ends where an operand is expected (column 4)\n"
                            "  a ^\n"
                            "     ^")
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.evaluate("a ^ nowhere")
    assert str(e.value) == ("expression: the name 'nowhere' is not bound to an operand (column 5)\n"
                            "  a ^ nowhere\n"
                            "      ^^^^^^^")
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.evaluate("~a", {"a": a, "spare": 1})
    assert str(e.value) == "operand 'spare' is bound but the expression does not use it (its names: a)"
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.evaluate("a ^ a", out=np.empty(4, np.uint16))
    assert str(e.value) == "out: the result is uint8, but out has dtype uint16"
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.evaluate("a ^ a", out=np.empty(5, np.uint8))
    assert str(e.value) == "out: the result has shape (4,), but out has shape (5,)"
    with pytest.raises(dmlbits.UsageError):
        dmlbits.evaluate(b"a")
    with pytest.raises(dmlbits.UsageError):
        dmlbits.evaluate("a", {1: a})
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.evaluate("a ^ c", {"c": np.zeros(3, np.uint8)})
    assert "cannot be broadcast" in str(e.value)
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.evaluate("a ^ c", {"c": np.zeros(3, complex)})
    assert str(e.value).startswith("operand 'c': ")
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.evaluate("a ^ c", {"c": "x.npy"})
    assert "operand 'c': 'x.npy' is not a literal" in str(e.value)
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.evaluate("popcount(a, out_dtype=uint16)")
    assert "popcount's out_dtype is uint8 or uint32, not uint16 (column 23)" in str(e.value)
    with pytest.raises(dmlbits.UsageError):
        dmlbits.evaluate("a", threads=0)


def test_dask_evaluate_on_chunks_equals_evaluate_on_the_whole():
    x = RNG.integers(0, 2**32, (9, 13), dtype=np.uint32)
    y = RNG.integers(0, 2**32, (13,), dtype=np.uint32)
    z = RNG.integers(0, 2**32, (9, 13), dtype=np.uint32)
    a = da.from_array(x, chunks=(4, 5))
    b = da.from_array(y, chunks=6)
    lit = list(range(13))
    expr = "popcount((a ^ b) & ~z | lit)"
    r = dd.evaluate(expr, out_dtype="uint32")  # z a NumPy array, lit a list: both cut into blocks
    assert isinstance(r, da.Array) and r.dtype == np.uint32 and r.shape == (9, 13)
    whole = dmlbits.evaluate(expr, {"a": x, "b": y, "z": z, "lit": lit}, out_dtype="uint32")
    np.testing.assert_array_equal(r.compute(scheduler="threads"), whole)
    np.testing.assert_array_equal(whole, popcount((x ^ y) & ~z | np.arange(13, dtype=np.uint32), "uint32"))
    s = dd.evaluate("(a >> k) & 0xff", {"a": a, "k": 3}, shift_overflow="zero", backend="cpu")
    np.testing.assert_array_equal(s.compute(scheduler="sync"), (x >> 3) & 0xFF)
    # Refused when the graph is built, not on a worker.
    with pytest.raises(dmlbits.UsageError) as e:
        dd.evaluate("a ^")
    assert "^" in str(e.value)
    with pytest.raises(dmlbits.InvalidInputError):
        dd.evaluate("a ^ c", {"c": da.zeros((3,), np.uint32, chunks=2)})
    with pytest.raises(dmlbits.UsageError) as e:
        dd.evaluate("a ^ [1, 2]")
    assert "bind it to a name" in str(e.value)
    with pytest.raises(dmlbits.UsageError):
        dd.evaluate("p | q", {"p": 1, "q": 2})


def test_check_runs_expression_cases(tmp_path):
    a = np.array([0x0F, 0xF0, 0x33], np.uint8)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "want.npy", popcount(a ^ np.uint8(0x0F)))
    np.save(tmp_path / "wrong.npy", popcount(a))
    (tmp_path / "m.json").write_text("""{"cases": [
      {"name": "ok", "expression": "popcount(a ^ k)", "inputs": {"a": "a.npy", "k": "0x0f"}, "expected": "want.npy"},
      {"name": "bad", "expression": "popcount(a ^ k)", "inputs": {"a": "a.npy", "k": [15, 15, 15]},
       "expected": "wrong.npy"}]}""")
    r = dmlbits.check(tmp_path / "m.json")
    assert r["ok"].passed and r["bad"].outcome == "fail" and r.failed == 1
    r = dmlbits.check(tmp_path / "m.json", update=True)
    assert r["bad"].updated and dmlbits.check(tmp_path / "m.json")
    np.testing.assert_array_equal(np.load(tmp_path / "wrong.npy"), popcount(a ^ np.uint8(0x0F)))
    (tmp_path / "both.json").write_text('{"cases": [{"name": "x", "op": "not", "expression": "~a", '
                                        '"inputs": {"a": "a.npy"}, "expected": "want.npy"}]}')
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.check(tmp_path / "both.json")
    assert "case 'x': give exactly one of \"op\"" in str(e.value)
