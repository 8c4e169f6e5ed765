"""Operands in every layout NumPy makes: Fortran order, step and reversed views, transposes,
big-endian data, around the sizes where the module changes paths (128 KiB, the library's
64 KiB conversion chunks, 4096-element plans). Values and the result's order are NumPy's
(issue 37, items 5 and 6)."""

import numpy as np
import pytest

import dmlbits
from reference import expected

INTS = ["uint8", "int16", "uint32", "int64"]
BITS = ["float16", "float32", "float64"]  # compared as bit patterns (reference.py)


def data(dtype, shape, seed):
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape, dtype=np.int64))
    return rng.integers(0, 256, size=n * np.dtype(dtype).itemsize, dtype=np.uint8).view(dtype).reshape(shape)


def flags(x):
    return x.flags.c_contiguous, x.flags.f_contiguous


def fortran(a):
    return np.asarray(a, order="F")


def big_endian(a):
    return a.astype(a.dtype.newbyteorder(">"))


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("shape", [(3, 5), (4, 3, 2), (129, 256), (2, 3, 4, 5)])
def test_fortran_operands_give_fortran_results_as_numpy(dtype, shape):
    a, b = data(dtype, shape, 1), data(dtype, shape, 2)
    fa, fb = fortran(a), fortran(b)
    pairs = [(dmlbits.bitwise_xor(fa, fb), np.bitwise_xor(fa, fb)),
             (dmlbits.bitwise_and(fa, 0x5A), np.bitwise_and(fa, 0x5A)),
             (dmlbits.bitwise_or(fa, np.array(7, dtype)), np.bitwise_or(fa, np.array(7, dtype))),
             (dmlbits.bitwise_not(fa), np.invert(fa)),
             (dmlbits.bitwise_not(big_endian(fa)), np.invert(big_endian(fa))),
             (dmlbits.bitwise_not(fa[::2, ::-1]), np.invert(fa[::2, ::-1]))]
    if dtype[0] == "u":  # (shifts take unsigned types)
        fc = fortran(b % np.array(8 * a.itemsize, dtype))
        pairs.append((dmlbits.left_shift(fa, fc, shift_overflow="zero"), np.left_shift(fa, fc)))
    for got, want in pairs:
        assert got.dtype == want.dtype.newbyteorder("=") and got.shape == want.shape
        assert got.tobytes() == want.astype(got.dtype).tobytes()
        assert flags(got) == flags(want), (flags(got), flags(want))
        assert got.flags.owndata and got.base is None
    pc = dmlbits.bitwise_count(fa)
    assert pc.tobytes() == expected("popcount", a).tobytes() and flags(pc) == flags(np.invert(fa))


def test_mixed_and_broadcast_layouts_give_numpys_values():
    # Only arrays all Fortran-ordered with one shape run on their transposes; a mix is C order,
    # as NumPy makes it for F and C operands.
    a, b = data("uint16", (6, 7), 3), data("uint16", (6, 7), 4)
    for x, y in [(fortran(a), b), (a, fortran(b)), (fortran(a), b[0]), (fortran(a), fortran(b)[:, :1]),
                 (fortran(a)[:, 1:], fortran(b)[:, :6]), (fortran(a).T, fortran(b).T)]:
        got, want = dmlbits.bitwise_xor(x, y), np.bitwise_xor(x, y)
        assert got.tobytes() == want.tobytes() and got.shape == want.shape
        if not (x.flags.f_contiguous and not x.flags.c_contiguous) or x.shape != y.shape:
            continue
        assert flags(got) == flags(want)
    assert flags(dmlbits.bitwise_xor(fortran(a), b)) == flags(np.bitwise_xor(fortran(a), b)) == (True, False)


def views(a):
    """Strided, reversed, transposed and big-endian forms of 1-D `a` (each with a's values in
    C order), as (name, view)."""
    doubled = np.repeat(a, 2)
    out = [("step", doubled[::2]), ("step-1", doubled[1::2]), ("reversed", a[::-1].copy()[::-1]),
           ("big-endian", big_endian(a)), ("big-endian-step", big_endian(doubled)[::2])]
    if a.size % 4 == 0:
        m = a.reshape(-1, 4)
        out.append(("transposed", np.ascontiguousarray(m.T).T))
        out.append(("2-d-step", np.repeat(m, 3, axis=1)[:, ::3]))
    return out


# Around 128 KiB (where results were mapped on their own) and the library's 64 KiB conversion
# chunks: 16384 4-byte elements.
SIZES = [1, 4095, 16383, 16384, 16385, (32 << 10) - 1, 32 << 10, (32 << 10) + 5, 3 * 16384 + 7]


@pytest.mark.parametrize("n", SIZES)
def test_strided_and_big_endian_operands_match_numpy(n):
    for dtype in ("uint32", "float32", "uint8", "int64", "float16"):
        a, b = data(dtype, (n,), n), data(dtype, (n,), n + 1)
        for (name, va), (_, vb) in zip(views(a), views(b)):
            ca, cb = np.array(va, va.dtype.newbyteorder("=")), np.array(vb, vb.dtype.newbyteorder("="))
            want_xor = expected("xor", ca, cb)
            got = dmlbits.bitwise_xor(va, vb)
            assert got.dtype == want_xor.dtype and got.shape == va.shape, (dtype, name)
            assert got.tobytes() == want_xor.tobytes(), (dtype, name)
            # NumPy's order='K' for operands of one layout: np.empty_like's.
            assert got.flags.owndata and flags(got) == flags(np.empty_like(va)), (dtype, name)
            assert dmlbits.bitwise_xor(va, cb).tobytes() == want_xor.tobytes(), (dtype, name)  # one converted
            assert dmlbits.bitwise_not(va).tobytes() == expected("not", ca).tobytes(), (dtype, name)
            if dtype[0] in "ui":
                assert flags(got) == flags(np.bitwise_xor(va, vb)), (dtype, name)
        if dtype == "uint32":
            va = views(a)[0][1]
            assert dmlbits.bitwise_and(va, 0xFF00FF).tobytes() == (a & 0xFF00FF).tobytes()   # a literal
            one = big_endian(a[:1])
            assert dmlbits.bitwise_or(va, one).tobytes() == (a | a[0]).tobytes()          # a broadcast element
            assert dmlbits.bitwise_count(va, out_dtype="uint32").tobytes() == \
                expected("popcount", a, out_dtype="uint32").tobytes()
            assert dmlbits.right_shift(big_endian(a), va % 32).tobytes() == (a >> (a % 32)).tobytes()


def test_strided_operands_broadcast_along_an_axis():
    # An axis broadcast cannot run in flat chunks: the view is converted whole, before.
    a = data("uint32", (3, 40000), 5)
    row = np.repeat(data("uint32", (40000,), 6), 2)[::2]
    col = big_endian(data("uint32", (3, 1), 7))
    assert dmlbits.bitwise_xor(a, row).tobytes() == (a ^ row).tobytes()
    assert dmlbits.bitwise_xor(row, a[:, ::-1]).tobytes() == (row ^ a[:, ::-1]).tobytes()
    assert dmlbits.bitwise_and(a[:, ::2], col).tobytes() == (a[:, ::2] & col).tobytes()


def test_out_overlapping_a_strided_input_that_is_read_later():
    # A converted input is read chunk by chunk as the run goes: out over its later part must
    # not be written before it is read (the result goes through a temporary).
    n = 1 << 20   # 4 MiB of uint32: many 64 KiB conversion chunks
    a = np.arange(n, dtype=np.uint32)
    want = ~a[::2]
    dmlbits.bitwise_not(a[::2], out=a[n // 2:])
    assert a[n // 2:].tobytes() == want.tobytes()
    b = big_endian(np.arange(n, dtype=np.uint32))
    c = np.empty(n, np.uint32)
    want = ~np.arange(n, dtype=np.uint32)
    dmlbits.bitwise_not(b, out=c)
    assert c.tobytes() == want.tobytes()
    d = np.arange(n, dtype=np.uint32)
    want = d[::-1] ^ d
    dmlbits.bitwise_xor(d[::-1], d, out=d)   # out is B, A reads it backwards
    assert d.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "float64"])
@pytest.mark.parametrize("shape", [(32, 32), (64, 64), (2, 3, 4), (5, 1, 3)])
def test_small_fortran_calls_made_again_run_through_a_plan_as_c_order_calls_do(dtype, shape):
    # A small call made again runs the plan its first call left (issue 44 item 10: Fortran
    # operands missed it and paid the full path, 3-5x NumPy at 32x32 where C order is 1.5x).
    # The planned call must give what the first gave: NumPy's values, Fortran order, a new array;
    # and a call the plan does not fit (a C operand, out=, another shape) must not take it.
    def bits(x):  # an unsigned view of the same itemsize, which NumPy's bitwise ops take
        return x.view(f"u{x.itemsize}")

    a, b = fortran(data(dtype, shape, 5)), fortran(data(dtype, shape, 6))
    for _ in range(3):
        for got, want in [(dmlbits.bitwise_xor(a, b), np.bitwise_xor(bits(a), bits(b))),
                          (dmlbits.bitwise_not(a), np.invert(bits(a)))]:
            assert got.dtype == a.dtype and got.shape == want.shape and got.flags.owndata
            assert bits(got).tolist() == want.tolist() and flags(got) == flags(want)
    c = np.ascontiguousarray(b)
    mixed, want = dmlbits.bitwise_and(a, c), np.bitwise_and(bits(a), bits(c))
    assert bits(mixed).tolist() == want.tolist() and flags(mixed) == flags(want)
    out = np.zeros(shape, dtype, order="F")
    assert dmlbits.bitwise_or(a, b, out=out) is out
    assert bits(out).tolist() == np.bitwise_or(bits(a), bits(b)).tolist()
    other = fortran(data(dtype, shape[:-1] + (shape[-1] + 1,), 7))
    assert bits(dmlbits.bitwise_not(other)).tolist() == np.invert(bits(other)).tolist()
