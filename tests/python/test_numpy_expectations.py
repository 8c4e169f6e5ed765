"""What a NumPy user expects of the module (issue #37): Python float literals keep their sign and
exact value, 0-d results are what NumPy's ufuncs return, out= takes any writeable array of the
result's dtype and shape, masked arrays are not silently unmasked, and Python's messages name
Python's keywords. NumPy is the oracle throughout."""

import numpy as np
import pytest

import dmlbits

FLOATS = [(np.float16, np.uint16), (np.float32, np.uint32), (np.float64, np.uint64)]


@pytest.mark.parametrize("ftype,utype", FLOATS)
def test_a_float_literal_keeps_its_sign(ftype, utype):
    zeros = np.zeros(3, ftype)
    got = dmlbits.bitwise_or(zeros, -0.0)
    want = np.bitwise_or(zeros.view(utype), np.array(-0.0, ftype).view(utype))
    assert got.dtype == ftype and got.view(utype).tolist() == want.tolist()
    assert want[0] == 1 << (8 * np.dtype(ftype).itemsize - 1)  # the sign bit alone
    # 0-d, a literal first, and dtype= with two literals: the same bits.
    assert np.asarray(dmlbits.bitwise_or(ftype(0), -0.0)).view(utype) == want[0]
    assert dmlbits.bitwise_xor(-0.0, zeros).view(utype).tolist() == want.tolist()
    two = dmlbits.bitwise_or(-0.0, 0.0, dtype=np.dtype(ftype).name)
    assert np.asarray(two).view(utype) == want[0]


@pytest.mark.parametrize("ftype,utype", FLOATS)
def test_a_float_literal_is_rounded_once_from_its_value(ftype, utype):
    # Values halfway between two neighbours of the dtype, where rounding the shortest decimal
    # text ("1.0000000596046448", above the tie) differs from rounding the double (to even).
    eps = np.finfo(ftype).eps
    for x in (1 + float(eps) / 2, 1 + 3 * float(eps) / 2, -(1 + float(eps) / 2), 0.1, 1e-300, 5e-324, 65519.0,
              2.0**-24, 3.0 * 2.0**-25):
        with np.errstate(over="ignore", under="ignore"):
            want = np.array([x], ftype)
        if np.isinf(want[0]):
            continue  # out of range: refused, not rounded (tests/python/test_errors.py)
        got = dmlbits.bitwise_or(np.zeros(1, ftype), x)
        assert got.view(utype).tolist() == want.view(utype).tolist(), x


def test_a_float_literal_on_integers_is_refused_as_on_the_command_line():
    # '[1.0]' is refused for uint8 by the CLI; NumPy refuses floats in bitwise operations too.
    with pytest.raises(dmlbits.InvalidInputError, match="1.0 is not an integer"):
        dmlbits.bitwise_and(np.zeros(2, np.uint8), 1.0)


def test_zero_d_results_are_what_numpy_returns():
    cases = [
        (dmlbits.bitwise_and, np.bitwise_and, (np.array(5), np.array(3))),
        (dmlbits.bitwise_and, np.bitwise_and, (np.uint32(12), np.uint32(10))),
        (dmlbits.bitwise_xor, np.bitwise_xor, (np.array(5, np.uint8), np.array(3, np.uint8))),
        (dmlbits.bitwise_not, np.invert, (np.array(7, np.uint16),)),
    ]
    for ours, theirs, args in cases:
        got, want = ours(*args), theirs(*args)
        assert type(got) is type(want) and got == want, (ours.__name__, args)
    got = dmlbits.bitwise_or(np.float32(1.5), -0.0)  # a float literal on a 0-d operand: -1.5
    assert type(got) is np.float32 and np.asarray(got).view(np.uint32) == np.float32(-1.5).view(np.uint32)
    # The same call made again (the kept plan of a small call) returns the same kind of thing.
    again = dmlbits.bitwise_and(np.array(5), np.array(3))
    assert type(again) is type(np.bitwise_and(np.array(5), np.array(3)))
    # With out=, out itself, 0-d or not, as NumPy returns it.
    out = np.zeros((), np.int64)
    assert dmlbits.bitwise_and(np.array(5), np.array(3), out=out) is out and out == 1
    assert np.bitwise_and(np.array(5), np.array(3), out=np.zeros((), np.int64)).shape == ()


@pytest.mark.parametrize("make_out", [
    lambda: np.zeros(20, np.uint32)[::2],                       # strided
    lambda: np.zeros((10, 2), np.uint32)[:, 1],                 # a column
    lambda: np.zeros(10, ">u4"),                                # big-endian
])
def test_out_takes_any_writeable_array_as_numpy_does(make_out):
    a = np.arange(10, dtype=np.uint32) * 0x01010101
    b = np.full(10, 0xF0F0F0F0, np.uint32)
    out, want_out = make_out(), make_out()
    want = np.bitwise_and(a, b, out=want_out)
    assert dmlbits.bitwise_and(a, b, out=out) is out
    assert out.dtype == want.dtype and out.tolist() == want.tolist()


def test_out_overlapping_a_strided_input():
    buf = np.arange(20, dtype=np.uint8)
    want = np.arange(20, dtype=np.uint8)
    np.bitwise_xor(want[::2], want[1::2], out=want[1::2])
    dmlbits.bitwise_xor(buf[::2], buf[1::2], out=buf[1::2])
    assert buf.tolist() == want.tolist()


def test_masked_arrays_are_refused_not_unmasked():
    m = np.ma.masked_array(np.array([1, 2, 3], np.uint8), mask=[False, True, False])
    assert np.ma.is_masked(np.bitwise_and(m, 1))  # NumPy keeps the mask
    for call in (lambda: dmlbits.bitwise_and(m, 1), lambda: dmlbits.bitwise_and(np.uint8(1), m),
                 lambda: dmlbits.bitwise_not(m)):
        with pytest.raises(dmlbits.UsageError, match="masked array"):
            call()
        with pytest.raises(TypeError):
            call()
    # After a plain call of the same shape and dtype (a kept plan), still refused.
    plain = np.array([1, 2, 3], np.uint8)
    dmlbits.bitwise_and(plain, plain)
    with pytest.raises(dmlbits.UsageError, match="masked array"):
        dmlbits.bitwise_and(m, plain)
    with pytest.raises(dmlbits.UsageError, match="masked array"):
        dmlbits.bitwise_and(plain, plain, out=np.ma.masked_array(np.zeros(3, np.uint8)))


def test_messages_name_python_keywords(tmp_path):
    a = np.zeros(4, np.uint8)
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.bitwise_and(3, 5)
    assert str(e.value).endswith("no other operand names one; use dtype=")
    (tmp_path / "l.json").write_text("[1, 2]")
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.read_tensor(tmp_path / "l.json")
    assert str(e.value).endswith('give the tensor as {"dtype": ..., "data": ...} or use dtype=')
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_and(a, a, adapter="no-such-adapter-zzz", backend="d3d12")
    assert "--" not in str(e.value)
    if "no adapter named like" in str(e.value):  # where a D3D12 runtime lists adapters
        assert str(e.value).startswith("adapter: no adapter named like 'no-such-adapter-zzz'")
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_and(a, a, threads=300, backend="cpu")
    assert "--" not in str(e.value) and str(e.value).startswith("threads:")
