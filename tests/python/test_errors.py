"""Refusals as Python exceptions carrying the CLI's message and exit status."""

import pickle

import numpy as np
import pytest

import dmlbits


def cli_message(cli, *args):
    """The CLI's error message (without "dmlbits: ") and its exit status."""
    r = cli(*args)
    assert r.returncode != 0, args
    text = r.stderr.decode().strip().splitlines()[-1]
    return text.removeprefix("dmlbits: ").removeprefix("error: "), r.returncode


def npy(tmp_path, name, array):
    path = tmp_path / name
    np.save(path, array)
    return path


def test_mixed_dtypes_are_refused_as_directml_refuses_them(cli, tmp_path):
    a = np.arange(4, dtype=np.uint8)
    b = np.arange(4, dtype=np.uint16)
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.bitwise_and(a, b)
    assert isinstance(e.value, TypeError) and isinstance(e.value, ValueError)
    message, status = cli_message(cli, "and", npy(tmp_path, "a.npy", a), npy(tmp_path, "b.npy", b))
    assert str(e.value) == message
    assert e.value.exit_status == status == 3
    assert e.value.code == "invalid-input"


def test_a_refusal_names_the_lowest_level_that_accepts(cli, tmp_path):
    a = np.arange(4, dtype=np.int32)
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.bitwise_xor(a, a, feature_level="3_0")
    assert "needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)" in str(e.value)
    path = npy(tmp_path, "a.npy", a)
    assert str(e.value) == cli_message(cli, "xor", path, path, "--feature-level", "3_0")[0]
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.left_shift(np.arange(4, dtype=np.uint8).reshape(2, 2), np.uint8(1), feature_level=2.1)
    assert "DML_FEATURE_LEVEL_3_0" in str(e.value)


def test_shapes_that_do_not_broadcast(cli, tmp_path):
    a = np.zeros((2, 3), np.uint32)
    b = np.zeros((4,), np.uint32)
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.bitwise_or(a, b)
    assert str(e.value) == cli_message(cli, "or", npy(tmp_path, "a.npy", a), npy(tmp_path, "b.npy", b))[0]


def test_a_literal_that_does_not_fit(cli, tmp_path):
    a = np.zeros(3, np.uint8)
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.bitwise_and(a, 0x1FF)
    assert str(e.value) == cli_message(cli, "and", npy(tmp_path, "a.npy", a), "511")[0]
    with pytest.raises(dmlbits.Error) as e:
        dmlbits.bitwise_and(1, 2)
    assert "the data type is unknown" in str(e.value)


def test_bad_keywords_are_usage_errors(cli):
    a = np.zeros(3, np.uint8)
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_and(a, a, backend="gpu")
    assert str(e.value) in cli_message(cli, "and", "1", "2", "--dtype", "uint8", "--backend", "gpu")[0]
    assert e.value.exit_status == 2
    with pytest.raises(dmlbits.UsageError, match="unknown level '9_9'"):
        dmlbits.bitwise_and(a, a, feature_level="9_9")
    with pytest.raises(dmlbits.UsageError, match="unknown mode 'clamp'"):
        dmlbits.left_shift(a, a, shift_overflow="clamp")
    with pytest.raises(dmlbits.UsageError, match="instruction set"):
        dmlbits.bitwise_and(a, a, backend="d3d12", isa="avx2")
    with pytest.raises(dmlbits.UsageError, match="threads"):
        dmlbits.bitwise_and(a, a, threads=0)
    with pytest.raises(dmlbits.UsageError, match="not a literal"):
        dmlbits.bitwise_and(a, "a.npy")
    with pytest.raises(TypeError):
        dmlbits.bitwise_and(a, a, bogus=1)


def test_out_is_checked():
    a = np.zeros((2, 2), np.uint16)
    with pytest.raises(dmlbits.UsageError, match="out: the result is uint16, but out has dtype uint32"):
        dmlbits.bitwise_and(a, a, out=np.zeros((2, 2), np.uint32))
    with pytest.raises(dmlbits.UsageError, match=r"shape \(2, 2\), but out has shape \(4,\)"):
        dmlbits.bitwise_and(a, a, out=np.zeros(4, np.uint16))
    ro = np.zeros((2, 2), np.uint16)
    ro.flags.writeable = False
    with pytest.raises(dmlbits.UsageError, match="read-only"):
        dmlbits.bitwise_and(a, a, out=ro)
    with pytest.raises(dmlbits.UsageError, match="ndarray"):
        dmlbits.bitwise_and(a, a, out=[0, 0])
    with pytest.raises(dmlbits.UsageError, match=r"dtype \|b1, which no result has"):
        dmlbits.bitwise_and(a, a, out=np.zeros((2, 2), bool))
    # DirectML does not let BIT_COUNT's output alias its input: in place is refused.
    u8 = np.zeros(4, np.uint8)
    with pytest.raises(dmlbits.UsageError, match="out=x .in place. is not offered: DirectML does not let BIT_COUNT"):
        dmlbits.bitwise_count(u8, out=u8)
    # The same memory seen as another dtype is not in place: it is refused as any other out.
    u32 = np.zeros(4, np.uint32)
    with pytest.raises(dmlbits.UsageError, match="out: the result is uint32, but out has dtype float32"):
        dmlbits.bitwise_not(u32, out=u32.view(np.float32))
    # A standard-input or file name is never read as an operand.
    with pytest.raises(dmlbits.UsageError, match="not a literal"):
        dmlbits.bitwise_and(u8, "-")


def test_unsupported_numpy_dtypes():
    with pytest.raises(dmlbits.InvalidInputError, match="unsupported dtype '<c8'"):
        dmlbits.bitwise_not(np.zeros(2, np.complex64))
    with pytest.raises(dmlbits.InvalidInputError, match="unsupported dtype"):
        dmlbits.bitwise_not(np.array(["x"]))


def test_too_many_dimensions(cli, tmp_path):
    a = np.zeros((1,) * 9, np.uint8)
    with pytest.raises(dmlbits.InvalidInputError):
        dmlbits.bitwise_not(a)


def test_exceptions_pickle():
    try:
        dmlbits.bitwise_and(np.zeros(1, np.uint8), np.zeros(1, np.int8))
    except dmlbits.Error as e:
        back = pickle.loads(pickle.dumps(e))
        assert type(back) is type(e) and str(back) == str(e) and back.exit_status == 3


def test_every_error_category_has_a_class():
    import dmlbits._errors as errors
    from dmlbits import _dmlbits
    for code, status, _ in _dmlbits.errc_table():
        if code in ("interrupted", "broken-pipe"):
            continue  # KeyboardInterrupt; no pipe in process
        cls = errors.error_for_code(code)
        assert cls is not dmlbits.Error and cls.exit_status == status, code


def test_option_refusals_name_the_keywords():
    # prepare_request's refusals in Python's words (the CLI says --threads, --adapter, --in-place).
    a = np.zeros(4, np.uint8)
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_and(a, a, threads=300, backend="cpu")
    assert str(e.value) == "threads: 300 is more than 256"
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_and(a, a, adapter="0", backend="cpu")
    assert str(e.value) == "adapter= applies to the d3d12, directml and auto backends, not cpu"
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_and(a, a, threads=2, backend="d3d12")
    assert str(e.value) == "the d3d12 backend has no choice of CPU threads (threads=)"
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_not(a, out=a, repeat=2)
    assert str(e.value) == "out=x (in place) runs once: it cannot be combined with repeat or warmup"
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_not(a, repeat=0)
    assert str(e.value) == "repeat must be at least 1 and warmup at least 0"
    # Counts that are not Python ints, or do not fit a C int, are Python's own errors (the
    # extension's run() takes them as a METH_FASTCALL function, without pybind11's casters).
    with pytest.raises(TypeError):
        dmlbits.bitwise_not(a, repeat="2")
    with pytest.raises(OverflowError, match="repeat and warmup must fit a C int"):
        dmlbits.bitwise_not(a, repeat=2**40)
    with pytest.raises(OverflowError, match="repeat and warmup must fit a C int"):
        dmlbits.bitwise_not(a, warmup=2**31)


def test_each_keyword_is_read_by_the_librarys_parser():
    # One parser per kind in the library (request.hpp); the module words its refusal with the
    # keyword. threads= is read there too: only a Python int from 1 to 256 is a count.
    a = np.zeros(4, np.uint8)
    for bad, text in [(0, "threads: 0 is not from 1 to 256"),
                      (True, "threads: 'True' is not a thread count from 1 to 256"),
                      ("4", "threads: '4' is not a thread count from 1 to 256"),
                      (-1, "threads: '-1' is not a thread count from 1 to 256"),
                      (2**70, f"threads: {2**70} is more than 256")]:
        with pytest.raises(dmlbits.UsageError) as e:
            dmlbits.bitwise_and(a, a, threads=bad)
        assert str(e.value) == text
    with pytest.raises(dmlbits.UsageError) as e:
        dmlbits.bitwise_and(a, a, isa="neon")
    assert str(e.value) == "isa: unknown instruction set 'neon' (known: scalar, avx2, avx512)"
    with pytest.raises(dmlbits.UsageError, match=r"^out_dtype: unknown data type 'u9' \(known: uint8\|u1\|UINT8, "):
        dmlbits.bitwise_count(a, out_dtype="u9")
    with pytest.raises(dmlbits.InvalidInputError) as e:
        dmlbits.bitwise_and(1, 2)
    assert str(e.value) == "operand A (literal '1'): the data type is unknown: no other operand names one; use dtype="
    # NumPy's dtype objects are read by their NumPy names, for every dtype keyword.
    assert dmlbits.bitwise_count(a, out_dtype=np.uint32).dtype == np.uint32
    assert dmlbits.explain("and", a, 1, dtype=np.uint8)["tensors"]["OutputTensor"]["DataType"].endswith("UINT8")


def test_a_call_like_an_accepted_one_is_still_checked():
    # Each thread keeps the operations it validated; what differs from a kept one in dtype, shape
    # or level is checked afresh, and a refusal is the same every time.
    a = np.arange(8, dtype=np.int32)
    assert (dmlbits.bitwise_xor(a, a) == 0).all()
    for _ in range(2):
        with pytest.raises(dmlbits.InvalidInputError) as e:
            dmlbits.bitwise_xor(a, a, feature_level="3_0")
        assert str(e.value) == "xor: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)"
    for _ in range(2):
        with pytest.raises(dmlbits.InvalidInputError) as e:
            dmlbits.bitwise_xor(a, a[:3])
        assert str(e.value) == "xor: shapes (8,) and (3,) cannot be broadcast together"
    for _ in range(2):
        with pytest.raises(dmlbits.InvalidInputError) as e:
            dmlbits.bitwise_xor(a, a.astype(np.uint32))
        assert str(e.value).startswith("xor: the inputs have different data types (INT32 and UINT32)")
    b = np.arange(8, dtype=np.int32).reshape(2, 4)
    assert dmlbits.bitwise_xor(b, a[:4]).tolist() == (b ^ a[:4]).tolist()
    assert dmlbits.bitwise_xor(a, a[3:4]).tolist() == (a ^ a[3]).tolist()


def test_no_refusal_python_shows_names_a_command_line_flag(tmp_path, monkeypatch):
    # The library words a refused option by its key (OptionError) and each face spells it: what
    # Python shows names keywords (threads=, out=x), never the command line's --threads or
    # --in-place.
    a = np.zeros(4, np.uint8)
    manifest = tmp_path / "m.json"
    manifest.write_text('{"cases": [{"name": "n", "op": "not", "inputs": ["1"], "dtype": "uint8", '
                        '"expected": {"dtype": "uint8", "data": 254}}]}')
    refused = [
        lambda: dmlbits.bitwise_and(a, a, backend="gpu"),
        lambda: dmlbits.bitwise_and(a, a, threads=0),
        lambda: dmlbits.bitwise_and(a, a, threads=300, backend="cpu"),
        lambda: dmlbits.bitwise_and(a, a, backend="cpu-reference", isa="avx2"),
        lambda: dmlbits.bitwise_and(a, a, backend="cpu", adapter="0"),
        lambda: dmlbits.bitwise_and(a, a, backend="d3d12", threads=2),
        lambda: dmlbits.bitwise_and(a, a, isa="neon"),
        lambda: dmlbits.bitwise_and(a, a, feature_level="9_9"),
        lambda: dmlbits.left_shift(a, a, shift_overflow="clamp"),
        lambda: dmlbits.bitwise_count(a, out_dtype="u9"),
        lambda: dmlbits.bitwise_not(a, out=a, repeat=2),
        lambda: dmlbits.bitwise_not(a, repeat=0),
        lambda: dmlbits.bitwise_count(a, out=a),
        lambda: dmlbits.bitwise_and(a, a, out=np.zeros(4, np.uint32)),
        lambda: dmlbits.bitwise_and(1, 2),
        lambda: dmlbits.write_tensor(a, tmp_path / "x.unknown"),
        lambda: dmlbits.check(manifest, backend="cpu-reference", isa="avx2"),
    ]
    for variable, value in (("DMLBITS_THREADS", "0"), ("DMLBITS_ISA", "neon")):
        def with_variable(variable=variable, value=value):
            monkeypatch.setenv(variable, value)
            try:
                dmlbits.bitwise_and(a, a)
            finally:
                monkeypatch.delenv(variable)
        refused.append(with_variable)
    for i, call in enumerate(refused):
        with pytest.raises(dmlbits.Error) as e:
            call()
        assert "--" not in str(e.value), (i, str(e.value))
