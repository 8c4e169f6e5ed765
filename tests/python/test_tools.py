"""read_tensor / write_tensor, dmlbits.testing and dmlbits.check."""

import json

import numpy as np
import pytest

import dmlbits
import dmlbits.testing


def test_json_with_exact_64_bit_integers_and_hex(tmp_path):
    p = tmp_path / "t.json"
    p.write_text('{"dtype": "uint64", "shape": [3], "data": [18446744073709551615, "0x8000000000000001", 5]}')
    t = dmlbits.read_tensor(p)
    assert t.dtype == np.uint64 and t.tolist() == [2**64 - 1, 2**63 + 1, 5]
    q = tmp_path / "f.json"
    q.write_text('[["nan", "-inf"], ["0x7fc00001", -0.0]]')
    f = dmlbits.read_tensor(q, dtype="float32")
    assert f.view(np.uint32).tolist() == [[0x7FC00000, 0xFF800000], [0x7FC00001, 0x80000000]]


def test_round_trips_keep_every_bit(tmp_path, cli):
    a = np.array([[1.5, np.nan], [-0.0, np.inf]], np.float32)
    a.view(np.uint32)[0, 1] = 0x7FC01234  # a NaN payload
    for name, hex_ in [("a.npy", False), ("a.json", False), ("h.json", True)]:
        dmlbits.write_tensor(a, tmp_path / name, hex=hex_)
        dmlbits.testing.assert_bits_equal(dmlbits.read_tensor(tmp_path / name), a)
    assert np.load(tmp_path / "a.npy").tobytes() == a.tobytes()
    # What the CLI writes for the same tensor, byte for byte.
    r = cli("or", tmp_path / "a.npy", tmp_path / "a.npy", "-o", tmp_path / "c.json")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "c.json").read_bytes() == (tmp_path / "a.json").read_bytes()
    big = np.arange(6, dtype=">u4").reshape(2, 3, order="F")
    dmlbits.write_tensor(big, tmp_path / "b.npy")
    assert np.load(tmp_path / "b.npy").tolist() == big.tolist()


def test_write_tensor_refusals(tmp_path):
    with pytest.raises(dmlbits.UsageError, match="cannot tell the output format"):
        dmlbits.write_tensor(np.zeros(2, np.uint8), tmp_path / "x.bin")
    with pytest.raises(dmlbits.FileError) as e:
        dmlbits.write_tensor(np.zeros(2, np.uint8), tmp_path / "missing" / "x.npy")
    assert isinstance(e.value, OSError) and e.value.exit_status == 5
    with pytest.raises(dmlbits.FileError, match="cannot open"):
        dmlbits.read_tensor(tmp_path / "nope.npy")


def test_assert_bits_equal_is_bit_exact(cli, tmp_path):
    a = np.array([0.0, np.nan, 1.0], np.float64)
    dmlbits.testing.assert_bits_equal(a, a.copy())
    neg = a.copy()
    neg[0] = -0.0
    with pytest.raises(AssertionError) as e:
        dmlbits.testing.assert_bits_equal(neg, a)
    assert isinstance(e.value, dmlbits.MismatchError)
    payload = a.copy()
    payload.view(np.uint64)[1] ^= np.uint64(1)
    with pytest.raises(dmlbits.MismatchError):
        dmlbits.testing.assert_bits_equal(payload, a)
    with pytest.raises(dmlbits.MismatchError, match="dtype"):
        dmlbits.testing.assert_bits_equal(a.astype(np.float32), a)
    with pytest.raises(dmlbits.MismatchError, match="shape"):
        dmlbits.testing.assert_bits_equal(a[:2], a)


def test_assert_bits_equal_gives_the_expect_report(cli, tmp_path):
    a = np.arange(6, dtype=np.uint32).reshape(2, 3)
    golden = a.copy()
    golden[1, 2] ^= 0x80000000
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "golden.npy", golden)
    r = cli("or", tmp_path / "a.npy", "0", "--expect", tmp_path / "golden.npy")
    assert r.returncode == 1
    with pytest.raises(dmlbits.MismatchError) as e:
        dmlbits.testing.assert_bits_equal(a, str(tmp_path / "golden.npy"))
    assert str(e.value) == r.stdout.decode().rstrip("\n")


def test_check_returns_per_case_results(tmp_path):
    a = np.array([1, 2, 3], np.uint8)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "good.npy", np.invert(a))
    np.save(tmp_path / "bad.npy", a)
    (tmp_path / "m.json").write_text(json.dumps({"cases": [
        {"name": "good", "op": "not", "inputs": ["a.npy"], "expected": "good.npy"},
        {"name": "bad", "op": "not", "inputs": ["a.npy"], "expected": "bad.npy"},
        {"name": "refused", "op": "shl", "inputs": ["[1]", "[1]"], "dtype": "int8", "expect_error": "invalid-input"},
    ]}))
    result = dmlbits.check(tmp_path / "m.json", jobs=1)
    assert [c.name for c in result] == ["good", "bad", "refused"]
    assert [c.outcome for c in result] == ["pass", "fail", "pass"]
    assert result.passed == 2 and result.failed == 1 and not result
    assert "differ" in result["bad"].detail and result["bad"].report
    assert dmlbits.check(tmp_path / "m.json", filter="good")
    with pytest.raises(dmlbits.InvalidInputError):
        (tmp_path / "broken.json").write_text('{"cases": [{"name": "x", "op": "nope"}]}')
        dmlbits.check(tmp_path / "broken.json")


def test_check_update_never_writes_over_an_input(tmp_path):
    # Issue #37 item 3: as `dmlbits check --update` (tests/cli/same_file.sh), refused before any
    # case runs, with the CLI's exit status (2), and nothing written.
    a, b = np.array([1, 2, 3], np.uint8), np.array([4, 5, 6], np.uint8)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    (tmp_path / "m.json").write_text(json.dumps({"cases": [
        {"name": "x", "op": "xor", "inputs": ["a.npy", "b.npy"], "expected": "a.npy"}]}))
    with pytest.raises(dmlbits.UsageError, match="case 'x' input and case 'x' golden name the same file") as e:
        dmlbits.check(tmp_path / "m.json", update=True)
    assert e.value.exit_status == 2
    assert np.load(tmp_path / "a.npy").tolist() == a.tolist()
