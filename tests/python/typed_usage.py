"""Calls of dmlbits' public API as a typed program writes them: mypy --strict must accept every
line (test_typing.py), so that the stubs are checked against use, not only against themselves.
Also run, so that what it types is what the module does."""

import os
import tempfile

import numpy as np
import numpy.typing as npt

import dmlbits
import dmlbits.dask
import dmlbits.shards
import dmlbits.testing


def main() -> None:
    a: npt.NDArray[np.uint32] = np.array([12, 10], np.uint32)
    b = np.array([6, 3], np.uint32)
    both = dmlbits.bitwise_and(a, b)
    dmlbits.bitwise_or(a, 1, dtype=np.uint32, backend="cpu", threads=1)
    dmlbits.bitwise_xor(a, [1, 2], feature_level="6_4")
    dmlbits.bitwise_not(a, out=np.empty_like(a))
    dmlbits.invert(np.uint8(1))
    dmlbits.left_shift(a, np.uint32(33), shift_overflow="zero")
    dmlbits.right_shift(a, b, feature_level=4.1)
    counts = dmlbits.bitwise_count(a, out_dtype="uint32")
    dmlbits.popcount(np.int8(-1))
    result, timing = dmlbits.bitwise_xor(a, b, timing=True, repeat=2, warmup=1)
    seconds: float = timing["seconds"] if "seconds" in timing else 0.0
    evaluated = dmlbits.evaluate("popcount(a ^ b)", {"a": a, "b": b}, out_dtype="uint8")
    value, _ = dmlbits.evaluate("a & b", {"a": a, "b": b}, timing=True)
    described: dict[str, object] = dmlbits.explain("bitwise_and", a, b)
    dmlbits.explain_expression("a | b", {"a": a, "b": b})
    table = dmlbits.ops(feature_level="5_0")
    backends = [row["name"] for row in dmlbits.devices()["backends"]]
    version: str = dmlbits.__version__
    dmlbits.testing.assert_bits_equal(both, np.array([4, 2], np.uint32), max_listed=3)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "a.npy")
        dmlbits.write_tensor(a, path, format="npy")
        read: npt.NDArray[np.generic] = dmlbits.read_tensor(path)
        dmlbits.testing.assert_bits_equal(read, path)
    try:
        dmlbits.bitwise_and(a, np.array([1], np.uint8))
    except dmlbits.InvalidInputError as e:
        status: int | None = e.exit_status
        code: str | None = e.code
    functions = dmlbits.OPERATORS
    report = dmlbits.shards.MergedReport(tests=1, passed=1)
    ok: bool = bool(report) and report.summary().startswith("1 passed")
    lazy = dmlbits.dask.bitwise_xor(a, b, backend="cpu")
    lazy_expression = dmlbits.dask.evaluate("a ^ b", {"a": a, "b": b})
    print(both, counts, result, seconds, evaluated, value, described["operator"], table["ops"][0]["verb"], backends,
          version, status, code, sorted(functions), ok, lazy, lazy_expression)


if __name__ == "__main__":
    main()
