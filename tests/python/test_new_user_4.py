"""The fourth new-user pass (issue #44) through the Python module: float literals keep the exact
bits NumPy's conversion gives, NaN sign and payload included (item 2); texts name the keywords
the Python function has (item 9); a float literal past its dtype's range is refused, not rounded
to infinity (item 12). NumPy is the oracle for every value."""
import json
import struct
import warnings

import numpy as np
import pytest

import dmlbits
from dmlbits.testing import assert_bits_equal


def _double(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _bits(a):
    a = np.asarray(a)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize]).tolist()


# Doubles of every kind of NaN: quiet and signalling, both signs, payloads in the bits each
# narrower type keeps and in those it drops; and -0.0, subnormals, a float16 tie.
NANS = [0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0xFFF4000000000000, 0x7FF0040000000000,
        0x7FFC000000000000, 0xFFF0000000000400, 0x7FF8000000000001, 0xFFFFFFFFFFFFFFFF]
FLOATS = [_double(b) for b in NANS] + [-0.0, 5e-324, 1 + 2 ** -24, 65519.0, -65504.0, 2.5e-8]
DTYPES = [np.float16, np.float32, np.float64]


def _numpy_value(x, dtype):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NaN casts warn "invalid value"
        return np.array([x]).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("x", FLOATS, ids=lambda x: hex(struct.unpack("<Q", struct.pack("<d", x))[0]))
def test_a_float_literal_has_numpys_bits(dtype, x):
    zeros = np.zeros(1, dtype)
    want = _bits(_numpy_value(x, dtype))
    assert _bits(dmlbits.bitwise_or(zeros, x)) == want  # a Python float
    assert _bits(dmlbits.bitwise_or(x, zeros)) == want
    assert _bits(dmlbits.bitwise_or(zeros, [x])) == want  # a list literal
    assert _bits(dmlbits.bitwise_xor(zeros, (x,))) == want  # a tuple literal


def test_the_issues_example():
    got = dmlbits.bitwise_or(np.zeros(1, np.float32), -float("nan"))
    assert _bits(got) == [0xFFC00000] == _bits(np.float32(-float("nan")).reshape(1))
    got = dmlbits.bitwise_or(np.zeros(2, np.float64), [-float("nan"), float("nan")])
    assert _bits(got) == [0xFFF8000000000000, 0x7FF8000000000000]


@pytest.mark.parametrize("dtype,x", [(np.float16, 65520.0), (np.float16, 1e300), (np.float32, 1e300),
                                     (np.float32, -3.5e38)])
def test_a_float_past_the_range_is_refused_not_rounded_to_infinity(dtype, x):
    # NumPy's np.float16(65520.0) is inf (with an overflow warning); dmlbits refuses the value,
    # as the command line refuses it, and says how infinity is given (python.md, item 6).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert np.isinf(_numpy_value(x, dtype)[0])
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.bitwise_or(np.zeros(1, dtype), x)
    assert f"is out of range for {np.dtype(dtype).name}" in str(e.value)
    assert "infinity is given as inf" in str(e.value)
    assert _bits(dmlbits.bitwise_or(np.zeros(1, dtype), float("inf") if x > 0 else -float("inf"))) == \
        _bits(np.array([x * np.inf]).astype(dtype))


def test_a_golden_without_a_dtype_names_no_keyword_the_function_lacks(tmp_path):
    (tmp_path / "g.json").write_text("[1, 2, 3]")
    a = np.array([1, 2, 3], np.uint8)
    with pytest.raises(dmlbits.InvalidInputError) as e:
        assert_bits_equal(a, tmp_path / "g.json")
    text = str(e.value)
    assert "a golden file must name its data type" in text
    assert "dtype=" not in text and "--" not in text, text
    # check(): a case's detail in the manifest's words, the key a case has.
    (tmp_path / "a.npy").write_bytes(b"")
    np.save(tmp_path / "a.npy", a)
    (tmp_path / "m.json").write_text(json.dumps(
        {"cases": [{"name": "c", "op": "not", "inputs": ["a.npy"], "expected": "g.json"}]}))
    [case] = dmlbits.check(tmp_path / "m.json").cases
    assert '("dtype" applies to inputs, not to goldens)' in case.detail
    assert "--" not in case.detail, case.detail


@pytest.mark.parametrize("n", [4, 16 << 20])
def test_the_selection_text_names_no_command_line_option(n):
    # (auto's words on a software or slower adapter, "d3d12 named as the backend uses it anyway",
    # need a hardware adapter to be reached: auto_rule_test.cpp words them.)
    _, timing = dmlbits.bitwise_not(np.zeros(n, np.uint8), timing=True)
    assert "--" not in json.dumps(timing), timing
