"""The module's fast paths (issue 47 item 4) give what the full path gives: values, layouts, the
object returned, and every refusal, word for word. They are: a kept plan for calls of up to 1 Mi
elements (above 4096 the GIL released), Fortran-ordered operands with a Fortran-ordered out=
run on the transposes, and the keywords' options kept by the identity of their values. NumPy's
own functions are the oracle for values."""

import threading

import numpy as np
import pytest

import dmlbits


def data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    return rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype).reshape(shape)


def bits(x):  # an unsigned view of the same itemsize, which NumPy's bitwise ops take
    return x.view(f"u{x.itemsize}")


def message(call):
    with pytest.raises(dmlbits.Error) as e:
        call()
    return type(e.value), str(e.value)


@pytest.mark.parametrize("shape", [(64, 64), (128, 128), (512, 512), (1024, 1024), (1025, 1024)])
def test_calls_past_4096_elements_made_again_give_numpys_values(shape):
    # (64, 64) holds the GIL; (128, 128) to (1024, 1024) run a plan with it released; one past
    # 1 Mi elements keeps no plan. Each call made three times: the first the full path.
    a, b = data("uint32", shape, 1), data("uint32", shape, 2)
    out = np.zeros(shape, np.uint32)
    want = np.bitwise_xor(a, b)
    for _ in range(3):
        got = dmlbits.bitwise_xor(a, b)
        assert got.flags.c_contiguous and got.flags.owndata and np.array_equal(got, want)
        assert dmlbits.bitwise_xor(a, b, out=out) is out and np.array_equal(out, want)
        assert np.array_equal(dmlbits.left_shift(a, 3), np.left_shift(a, 3))
    # New operands of the same shape: the plan runs on them, not on the first call's.
    c = data("uint32", shape, 3)
    assert np.array_equal(dmlbits.bitwise_xor(a, c), np.bitwise_xor(a, c))


def test_calls_alternating_between_kept_plans_give_numpys_values():
    # A thread finds its last plan again without the map: calls that alternate between operators,
    # dtypes, shapes, operand counts and keywords each find their own plan, also after the
    # plans are dropped (at exit, _release_devices; also when 256 are kept) and made again.
    a, b = data("uint32", (4, 4), 4), data("uint32", (4, 4), 5)
    h, w = data("uint16", (4, 4), 6), data("uint32", (2, 8), 7)
    calls = [
        (lambda: dmlbits.bitwise_and(a, b), np.bitwise_and(a, b)),
        (lambda: dmlbits.bitwise_or(a, b), np.bitwise_or(a, b)),
        (lambda: dmlbits.bitwise_and(h, h[::-1].copy()), np.bitwise_and(h, h[::-1])),
        (lambda: dmlbits.bitwise_and(w, w[::-1].copy()), np.bitwise_and(w, w[::-1])),
        (lambda: dmlbits.invert(a), np.invert(a)),
        (lambda: dmlbits.bitwise_and(a, b[0]), np.bitwise_and(a, b[0])),
        (lambda: dmlbits.left_shift(a, b & 31, shift_overflow="wrap"), np.left_shift(a, b & 31)),
        (lambda: dmlbits.bitwise_and(a, b, threads=1), np.bitwise_and(a, b)),
    ]
    for r in range(3):
        for i, (call, want) in enumerate(calls):
            for _ in range(2):
                got = call()
                assert got.dtype == want.dtype and np.array_equal(got, want), (r, i)
        if r == 1:
            dmlbits._dmlbits._release_devices()
    for n in range(1, 301):  # past 256 kept plans, all dropped at once
        assert np.array_equal(dmlbits.bitwise_xor(a[:1], b[:1]), a[:1] ^ b[:1])
        x = np.arange(n, dtype=np.uint32)
        assert np.array_equal(dmlbits.bitwise_xor(x, x[::-1].copy()), x ^ x[::-1])
    assert np.array_equal(dmlbits.bitwise_and(a, b), np.bitwise_and(a, b))


def test_planned_medium_calls_are_refused_as_the_full_path_refuses_them():
    shape = (256, 256)
    a, b = data("uint32", shape, 1), data("uint32", shape, 2)
    refusals = [
        lambda: dmlbits.bitwise_and(a, b.astype(np.int32)),             # two dtypes
        lambda: dmlbits.bitwise_and(a, b, out=np.zeros(shape, np.int32)),  # out's dtype
        lambda: dmlbits.bitwise_and(a, b, out=np.zeros((256, 255), np.uint32)),
        lambda: dmlbits.bitwise_and(a, b, out=np.zeros(shape, np.uint32)[::-1]),  # fine: a strided out
        lambda: dmlbits.bitwise_and(a, b[:, :255]),                      # shapes that do not broadcast
    ]
    first = [None if i == 3 else message(f) for i, f in enumerate(refusals)]
    for _ in range(3):
        dmlbits.bitwise_and(a, b)  # the plan of this shape
        for i, f in enumerate(refusals):
            if i == 3:
                out = np.zeros(shape, np.uint32)[::-1]
                assert np.array_equal(dmlbits.bitwise_and(a, b, out=out), np.bitwise_and(a, b))
                continue
            assert message(f) == first[i]


def test_medium_planned_calls_from_threads_at_once():
    # Above 4096 elements the GIL is released while a plan runs: each thread's own plans.
    shape = (128, 128)
    a, b = data("uint32", shape, 1), data("uint32", shape, 2)
    want = np.bitwise_or(a, b)
    failures = []

    def work():
        for _ in range(200):
            if not np.array_equal(dmlbits.bitwise_or(a, b), want):
                failures.append(1)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "float64"])
@pytest.mark.parametrize("shape", [(32, 32), (2, 3, 4), (129, 256), (600, 700)])
def test_fortran_operands_into_a_fortran_out(dtype, shape):
    a, b = np.asfortranarray(data(dtype, shape, 5)), np.asfortranarray(data(dtype, shape, 6))
    want = np.bitwise_and(bits(a), bits(b))
    for _ in range(3):  # the full path, then the kept plan (small shapes)
        out = np.zeros(shape, dtype, order="F")
        assert dmlbits.bitwise_and(a, b, out=out) is out
        assert out.flags.f_contiguous and np.array_equal(bits(out), want)
        out = np.zeros(shape, dtype, order="F")
        assert dmlbits.bitwise_not(a, out=out) is out and np.array_equal(bits(out), np.invert(bits(a)))
    # The other mixes of layouts, after the plan: NumPy's values.
    for x, y, order in [(a, b, "C"), (np.ascontiguousarray(a), b, "F"), (a, np.ascontiguousarray(b), "F")]:
        out = np.zeros(shape, dtype, order=order)
        assert dmlbits.bitwise_and(x, y, out=out) is out and np.array_equal(bits(out), want)
    # In place on a Fortran array, and out= overlapping an operand otherwise.
    x = a.copy(order="F")
    assert dmlbits.bitwise_xor(x, b, out=x) is x and np.array_equal(bits(x), np.bitwise_xor(bits(a), bits(b)))
    x = a.copy(order="F")
    assert dmlbits.bitwise_xor(b, x, out=x) is x and np.array_equal(bits(x), np.bitwise_xor(bits(b), bits(a)))
    # timing=True returns out itself too.
    out = np.zeros(shape, dtype, order="F")
    got, timing = dmlbits.bitwise_and(a, b, out=out, timing=True)
    assert got is out and np.array_equal(bits(out), want) and isinstance(timing, dict)


def test_fortran_out_refusals_are_the_full_paths():
    shape = (32, 48)
    a, b = np.asfortranarray(data("uint32", shape, 5)), np.asfortranarray(data("uint32", shape, 6))
    outs = [np.zeros(shape, np.int32, order="F"), np.zeros((48, 32), np.uint32, order="F"),
            np.zeros(shape, np.bool_, order="F")]
    read_only = np.zeros(shape, np.uint32, order="F")
    read_only.flags.writeable = False
    outs.append(read_only)
    first = [message(lambda o=o: dmlbits.bitwise_and(a, b, out=o)) for o in outs]
    dmlbits.bitwise_and(a, b, out=np.zeros(shape, np.uint32, order="F"))  # a plan of this shape
    for o, want in zip(outs, first):
        assert message(lambda o=o: dmlbits.bitwise_and(a, b, out=o)) == want
    # The same refusals as for C-ordered operands and out, with the same words.
    c = [message(lambda o=o: dmlbits.bitwise_and(np.ascontiguousarray(a), np.ascontiguousarray(b),
                                                 out=np.ascontiguousarray(o)))
         for o in outs[:3]]
    assert [t for t, _ in first[:3]] == [t for t, _ in c]


def test_keywords_kept_by_identity_give_what_their_values_say():
    a = np.arange(16, dtype=np.uint32).reshape(4, 4)
    want = np.bitwise_count(a) if hasattr(np, "bitwise_count") else np.array(
        [bin(int(v)).count("1") for v in a.ravel()], np.uint8).reshape(4, 4)
    for _ in range(3):
        assert dmlbits.bitwise_count(a).dtype == np.uint8
        assert dmlbits.bitwise_count(a, out_dtype="uint32").dtype == np.uint32
        assert dmlbits.bitwise_count(a, out_dtype=np.uint32).dtype == np.uint32
        assert dmlbits.bitwise_count(a, out_dtype=np.dtype("uint32")).dtype == np.uint32
        got = dmlbits.bitwise_count(a, out_dtype="".join(["uint", "32"]))  # equal, not the same object
        assert got.dtype == np.uint32 and np.array_equal(got, want)
    for threads in (1, 2, 1, None):
        assert np.array_equal(dmlbits.bitwise_not(a, backend="cpu", threads=threads), ~a)
    # A value refused is refused every time, whatever was kept before.
    first = message(lambda: dmlbits.bitwise_not(a, backend="nope"))
    for _ in range(3):
        assert message(lambda: dmlbits.bitwise_not(a, backend="nope")) == first
        assert message(lambda: dmlbits.bitwise_not(a, threads=0))[0] is dmlbits.UsageError
        assert message(lambda: dmlbits.left_shift(a, 1, shift_overflow="never"))[0] is dmlbits.UsageError

    class Level(str):  # not kept by identity (a str subclass could change what it parses as)
        pass

    for _ in range(3):
        assert np.array_equal(dmlbits.bitwise_not(a, feature_level=Level("6_4")), ~a)
    # Many combinations: more than the kept ones, each still right.
    for level in ("5_0", "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4") * 3:
        for backend in ("cpu", "cpu-reference", "auto"):
            assert np.array_equal(dmlbits.bitwise_and(a, 5, backend=backend, feature_level=level), a & 5)


@pytest.mark.parametrize("shape", [(4, 4), (128, 128)])
def test_expressions_made_again_give_numpys_values_whatever_the_order_of_the_names(shape):
    # The kept plan takes its inputs in the expression's order; the call's names may come in any.
    a, b = data("uint32", shape, 1), data("uint32", shape, 2)
    out = np.zeros(shape, np.uint32)
    for _ in range(3):
        assert np.array_equal(dmlbits.evaluate("a & ~b", {"a": a, "b": b}), a & ~b)
        assert np.array_equal(dmlbits.evaluate("a & ~b", {"b": b, "a": a}), a & ~b)
        assert np.array_equal(dmlbits.evaluate("a & ~b", {"b": a, "a": b}), b & ~a)
        assert dmlbits.evaluate("(a >> 3) ^ b", {"b": b, "a": a}, out=out) is out
        assert np.array_equal(out, (a >> 3) ^ b)
        assert np.array_equal(dmlbits.evaluate("a & k", {"a": a, "k": 0xff}), a & 0xff)  # a literal: no plan
        assert np.array_equal(dmlbits.evaluate("a & k", {"a": a, "k": 0x0f}), a & 0x0f)
    c = data("uint32", shape, 3)
    assert np.array_equal(dmlbits.evaluate("a & ~b", {"a": c, "b": b}), c & ~b)


def test_planned_expressions_are_refused_as_the_full_path_refuses_them():
    a, b = data("uint32", (4, 4), 1), data("uint32", (4, 4), 2)
    refusals = [
        lambda: dmlbits.evaluate("a & b", {"a": a, "b": b.astype(np.int32)}),
        lambda: dmlbits.evaluate("a & b", {"a": a, "b": b}, out=np.zeros((4, 4), np.int32)),
        lambda: dmlbits.evaluate("a & b", {"a": a, "b": b, "c": b}),
        lambda: dmlbits.evaluate("a & b & d", {"a": a, "b": b, "d": b[:3]}),
    ]
    first = [message(f) for f in refusals]
    for _ in range(3):
        assert np.array_equal(dmlbits.evaluate("a & b", {"a": a, "b": b}), a & b)
        assert [message(f) for f in refusals] == first
        # out= overlapping an operand: through a temporary, never the plan's direct write.
        x = a.copy()
        assert dmlbits.evaluate("a & b", {"a": x, "b": b}, out=x) is x and np.array_equal(x, a & b)
