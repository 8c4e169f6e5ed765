#!/usr/bin/python3
"""Writes the DirectML conformance suite's data: .npy inputs, the outputs NumPy computes, and
`dmlbits check` manifests (issue #16). tests/directml/run runs them on `--backend directml`
(Microsoft's DirectML under wine) and on `--backend cpu-reference`; both must match NumPy bit
for bit.

Expected values come from NumPy, never from dmlbits. As in make_goldens.py (whose helpers this
imports), every operator is computed on the raw bits of the elements viewed as unsigned integers
of the element width. The shifts are computed here with vectorised NumPy in each
--shift-overflow mode, and checked against make_goldens.py's element-by-element Python integers
for every mode (zero, wrap and directml); `directml` is DirectML 1.15.4's rule for counts of the
width and more, as measured (shared/reference/directml-under-wine.md):
  - UINT8/16/32: the element taken as a 32-bit lane, shifted by (count & 31), the low 8/16/32
    bits kept (so UINT8 << 32 is the element itself, UINT8 << 8..31 is 0);
  - UINT64: c = the count's low 32 bits; c < 32: shifted by c; otherwise shifted by 32, then by
    (c & 31).

The manifests (in OUT_DIR):
  selfcheck.json       run first: DirectML's documented examples and a hand-computed broadcast,
                       their outputs typed in; a DirectML that computes zeros fails it.
  bitwise.json         and, or, xor, not, popcount (both output types): every data type x 1 to
                       8 dimensions with odd sizes, broadcasts in A, in B and in both (also
                       across ranks), 0-d scalars, edge values (0, all ones, sign bits, every NaN
                       class: quiet and signalling, payload bits, both signs, in float16/32/64;
                       +-0.0, subnormals, infinities) as all pairs, sizes past one chunk of
                       --chunk-bytes, older feature levels, and refusals (expect_error): signed
                       and float shifts, popcount to an unsupported type, 9 dimensions.
  shift-directml.json  shl and shr with --shift-overflow directml: UINT8/16/32/64 x 1 to 8
                       dimensions, broadcasts, every count 0 .. 2w+2 and the type's maximum
                       against edge values, counts of 2^32 and more for UINT64, sizes past one
                       chunk; and cases with no shift_overflow key, which expect the directml
                       rule (the default).
  shift-modes.json     shl and shr in the zero and wrap modes, the same counts: for the CPU
                       backends only (the directml backend runs DirectML's own rule alone).
Each manifest's "needs" field says what it needs ("shift-overflow-directml") and "backends"
which backends the suite runs it on.

The operators, their data types, output types and which of them shift come from the program
(`dmlbits ops --json`, the operator table): every operator it lists gets the rank, broadcast and
edge-value cases of its kind and the refusals of the data types it does not take, and an operator
without a NumPy model (MODELS here and in make_goldens.py) stops the generator with an error.

Usage: make_directml_suite.py OUT_DIR [--chunk-bytes N] [--huge] [--dmlbits PATH | --ops-json FILE]
  --chunk-bytes N  the buffer size the large cases are sized against (default 65536, what the
                   suite gives the directml backend); each large case spans 2 to 9 chunks.
  --huge           writes huge.json: two cases past the directml backend's default 256 MiB
                   buffer (not run in CI: ~1.1 GB of files).
  --dmlbits PATH   the binary whose operator table to cover (default $DMLBITS, else build/dmlbits)
  --ops-json FILE  a saved `dmlbits ops --json` instead (tests/directml/run: dmlbits.exe's)
The output is deterministic; stale .npy files and manifests in OUT_DIR are removed first.
"""

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_goldens  # noqa: E402
from make_goldens import (ALL_DTYPES, UNSIGNED, bits, expect_logic,  # noqa: E402
                          expect_not, expect_popcount, expect_shift, from_bits, le, random_bits,
                          short_dtype, unsigned_of, width)

SEED = 20261124

# Odd sizes, some dimensions of 1 (each rank 1 to 8; 100 to 400 elements).
SHAPES = {
    1: (67,),
    2: (7, 13),
    3: (3, 5, 11),
    4: (2, 3, 5, 7),
    5: (3, 1, 5, 3, 7),
    6: (2, 3, 1, 5, 3, 3),
    7: (1, 3, 2, 5, 1, 3, 5),
    8: (2, 1, 3, 1, 5, 3, 1, 7),
}

# (name, shape of A, shape of B): stride-0 dimensions in A, in B, in both, across ranks, 0-d.
BROADCASTS = [
    ("a_rows", (1, 7), (5, 7)),
    ("b_cols", (3, 5, 7), (5, 1)),
    ("both", (3, 1, 7), (1, 5, 1)),
    ("b_lower_rank", (2, 3, 5, 7), (5, 7)),
    ("a_lower_rank", (7,), (3, 1, 5, 7)),
    ("a_scalar", (), (3, 5)),
    ("b_scalar", (4, 9), ()),
    ("both_scalar", (), ()),
    ("rank8_both", (2, 1, 3, 1, 2, 1, 1, 5), (1, 3, 1, 2, 1, 2, 1, 5)),
]


# ---- Expected outputs ----

def expect_shift_np(op, a, b, mode):
    """Vectorised; counts are never >= 64 when NumPy shifts (no undefined behaviour)."""
    w = width(a.dtype)
    ua, ub = np.broadcast_arrays(bits(a).astype(np.uint64), bits(b).astype(np.uint64))
    mask = np.uint64((1 << w) - 1)

    def sh(x, c):  # every c < 64
        return ((x << c) & mask) if op == "shl" else (x >> c)

    if mode == "zero":
        over = ub >= w
        r = np.where(over, np.uint64(0), sh(ua, np.where(over, np.uint64(0), ub)))
    elif mode == "wrap":
        r = sh(ua, ub % np.uint64(w))
    elif mode == "directml":
        if w < 64:
            # A 32-bit lane: nothing above bit 31 survives, then the type's low bits are kept.
            c = ub & np.uint64(31)
            r = (((ua << c) & np.uint64(0xFFFFFFFF)) & mask) if op == "shl" else (ua >> c)
        else:
            c = ub & np.uint64(0xFFFFFFFF)
            small = c < 32
            r = np.where(small, sh(ua, np.where(small, c, np.uint64(0))),
                         sh(sh(ua, np.uint64(32)), c & np.uint64(31)))
    else:
        raise ValueError(mode)
    return from_bits(r.astype(unsigned_of(a.dtype)), a.dtype)


def expect_shift_checked(op, a, b, mode):
    r = expect_shift_np(op, a, b, mode)
    if mode in ("zero", "wrap", "directml") and r.size <= 4096:
        # Two independent computations of the same rule must agree.
        other = expect_shift(op, a, b, mode)
        assert np.array_equal(bits(r), bits(other)), (op, mode)
    return r


# The NumPy model of each operator, by verb: model(inputs, out_dtype, shift_mode). An operator the
# program lists without a model here stops the generator (Program.require_models).
MODELS = {
    "and": lambda x, out, mode: expect_logic("and", *np.broadcast_arrays(*x)),
    "or": lambda x, out, mode: expect_logic("or", *np.broadcast_arrays(*x)),
    "xor": lambda x, out, mode: expect_logic("xor", *np.broadcast_arrays(*x)),
    "not": lambda x, out, mode: expect_not(x[0]),
    "popcount": lambda x, out, mode: expect_popcount(x[0], out),
    "shl": lambda x, out, mode: expect_shift_checked("shl", x[0], x[1], mode),
    "shr": lambda x, out, mode: expect_shift_checked("shr", x[0], x[1], mode),
}
PROGRAM = None  # the Program (make_goldens.program) main() reads


def expect(op, inputs, mode=None, out_dtype=None):
    return MODELS[op](inputs, out_dtype or PROGRAM.default_output(op, inputs[0].dtype.name), mode)


# ---- Values ----

def int_edges(dtype):
    """0, 1, all ones, the sign bit alone, the largest positive, and bit patterns."""
    w = width(dtype)
    m = (1 << w) - 1
    sign = 1 << (w - 1)
    pats = [0, 1, m, sign, m >> 1, sign | 1, m - 1, int("55" * (w // 8), 16), int("AA" * (w // 8), 16),
            int("0F" * (w // 8), 16), int("F0" * (w // 8), 16), 2, sign >> 1]
    return pats


FLOAT_LAYOUT = {16: (5, 10), 32: (8, 23), 64: (11, 52)}  # exponent, mantissa bits


def float_edges(dtype):
    """Every class of special value, in both signs: NaNs quiet and signalling with the smallest,
    the largest, a single high and an alternating payload; +-0, +-inf, subnormals (smallest,
    largest, middle), the smallest normal, the largest finite, 1.0."""
    w = width(dtype)
    e, m = FLOAT_LAYOUT[w]
    sign = 1 << (w - 1)
    exp = ((1 << e) - 1) << m
    quiet = 1 << (m - 1)
    payload = quiet - 1                       # every payload bit below the quiet bit
    alternating = int("5" * (m // 4 + 1), 16) & payload
    nans = [exp | quiet, exp | quiet | 1, exp | quiet | payload, exp | quiet | alternating,
            exp | quiet | (quiet >> 1),
            exp | 1, exp | payload, exp | (quiet >> 1), exp | alternating]  # signalling: no quiet bit
    others = [0, exp,                          # +0, +inf
              1, (1 << m) - 1, 1 << (m - 1),   # subnormals: smallest, largest, middle
              1 << m, exp - 1,                 # smallest normal, largest finite
              ((1 << (e - 1)) - 1) << m]       # 1.0
    pats = []
    for s in (0, sign):
        pats += [p | s for p in nans + others]
    return pats


def edges(dtype):
    pats = int_edges(dtype)
    if np.dtype(dtype).kind == "f":
        pats += [p for p in float_edges(dtype) if p not in pats]
    return np.array(pats, dtype=unsigned_of(dtype))


def filled(rng, dtype, shape, first=None):
    """Random bits of `shape`, the first elements (flat) replaced by `first` (unsigned bits)."""
    x = bits(random_bits(rng, dtype, shape)).reshape(-1).copy()
    if first is not None:
        n = min(len(first), x.size)
        x[:n] = first[:n]
    return from_bits(x.reshape(shape), dtype)


def shift_counts(dtype):
    """Every count 0 .. 2w+2, the type's maximum and, for UINT64, counts of 2^32 and more (the
    directml rule looks at the low 32 bits only)."""
    w = width(dtype)
    counts = list(range(2 * w + 3)) + [(1 << w) - 1]
    if w == 8:
        counts += [31, 32, 33, 35, 41, 63, 64, 100, 128, 200, 254]
    elif w == 16:
        counts += [63, 64, 65, 100, 255, 256, 1000, 32767, 32768, 65534]
    elif w == 32:
        counts += [100, 255, 256, 65535, 65536, 2**31 - 1, 2**31, 2**31 + 3, 2**32 - 2]
    else:
        counts += [100, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 2**32 + 40, 2**32 + 64, 2**33 + 5,
                   2**40 + 3, 2**63, 2**63 + 5, 2**64 - 2]
    return np.array(sorted(set(counts)), dtype=unsigned_of(dtype))


def shift_values(rng, dtype):
    """Edge patterns and a few random values, top bit set in some (shr must not smear it)."""
    w = width(dtype)
    v = list(int_edges(dtype)) + [int(x) for x in bits(random_bits(rng, dtype, (5,)))]
    v += [int(x) | (1 << (w - 1)) for x in bits(random_bits(rng, dtype, (3,)))]
    return np.array(v, dtype=unsigned_of(dtype))


# ---- Writing ----

class Manifest:
    def __init__(self, name, note, backends, needs=None):
        self.name, self.note, self.backends, self.needs = name, note, backends, needs
        self.cases = []


class Writer:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.names = set()
        self.bytes = 0

    def save(self, name, array):
        arr = np.ascontiguousarray(array)
        assert arr.dtype.byteorder != ">", name
        path = name + ".npy"
        np.save(os.path.join(self.out_dir, path), arr, allow_pickle=False)
        self.bytes += os.path.getsize(os.path.join(self.out_dir, path))
        return path

    def case(self, manifest, name, op, inputs, mode=None, out_dtype=None, level=None, comment=None):
        assert name not in self.names, name
        self.names.add(name)
        inputs = [np.ascontiguousarray(x) for x in inputs]
        entry = {"name": name, "op": op,
                 "inputs": [self.save("%s_%s" % (name, label), x) for label, x in zip("ab", inputs)]}
        if mode is not None and mode != "default":
            entry["shift_overflow"] = mode
        if out_dtype is not None:
            entry["out_dtype"] = out_dtype
        if level is not None:
            entry["feature_level"] = level
        rule = "directml" if mode == "default" else mode
        entry["expected"] = self.save(name + "_expected", expect(op, inputs, rule, out_dtype))
        if comment:
            entry["comment"] = comment
        manifest.cases.append(entry)

    def hand(self, manifest, name, op, inputs, expected, comment, mode=None, out_dtype=None):
        """A case whose expected output is typed in, not computed."""
        assert name not in self.names, name
        self.names.add(name)
        entry = {"name": name, "op": op,
                 "inputs": [self.save("%s_%s" % (name, label), x) for label, x in zip("ab", inputs)]}
        if mode:
            entry["shift_overflow"] = mode
        if out_dtype:
            entry["out_dtype"] = out_dtype
        entry["expected"] = self.save(name + "_expected", expected)
        entry["comment"] = comment
        manifest.cases.append(entry)

    def refusal(self, manifest, name, op, inputs, message, mode=None, out_dtype=None):
        assert name not in self.names, name
        self.names.add(name)
        entry = {"name": name, "op": op,
                 "inputs": [self.save("%s_%s" % (name, label), x) for label, x in zip("ab", inputs)],
                 "expect_error": "invalid-input", "expect_message": message}
        if mode:
            entry["shift_overflow"] = mode
        if out_dtype:
            entry["out_dtype"] = out_dtype
        manifest.cases.append(entry)


def build(w, rng, chunk_bytes, huge, prog):
    prog.require_models(MODELS, "scripts/make_directml_suite.py (MODELS)")
    # The operators by kind, in table order: binary ones whose B is an operand, unary ones (with
    # each output type: (verb, --out-dtype or None for the default, case-name part)), shifts.
    binary_ops = [o["verb"] for o in prog.ops if o["arity"] == 2 and not o["shift"]]
    shift_ops = [o["verb"] for o in prog.ops if o["shift"]]
    unary = [(o["verb"], out, o["verb"] if out is None else "%s_%s" % (o["verb"], short_dtype(out)))
             for o in prog.ops if o["arity"] == 1 for out in prog.output_dtypes(o["verb"])]
    unary_ops = [o["verb"] for o in prog.ops if o["arity"] == 1]
    other_modes = [m for m in prog.shift_modes if m != "directml"]

    def unary_variants(dt):
        return [u for u in unary if dt in prog.input_dtypes(u[0])]

    def binary_ops_of(dt):
        return [op for op in binary_ops if dt in prog.input_dtypes(op)]

    def shift_ops_of(dt):
        return [op for op in shift_ops if dt in prog.input_dtypes(op)]

    both = ["directml", "cpu-reference"]
    bitwise = Manifest("bitwise", "%s: every data type, rank, broadcast, edge value, sizes past a chunk; "
                       "refusals" % ", ".join(binary_ops + unary_ops), both)
    shift_dml = Manifest("shift-directml", "%s with DirectML's rule for counts >= the width "
                         "(--shift-overflow directml, and the default)" % ", ".join(shift_ops), both,
                         "shift-overflow-directml")
    selfcheck = Manifest("selfcheck", "run first: known answers, typed in; DirectML computing zeros fails it",
                         both)
    shift_modes = Manifest("shift-modes", "%s in the %s modes: CPU backends only (the directml backend runs "
                           "DirectML's own rule alone)" % (", ".join(shift_ops), " and ".join(other_modes)),
                           ["cpu-reference"])

    # -- Every operator x data type x rank 1..8, odd sizes; the first elements are edge values. --
    for dt in ALL_DTYPES:
        e = edges(dt)
        for rank, shape in SHAPES.items():
            for op in binary_ops_of(dt):
                a = filled(rng, dt, shape, e)
                b = filled(rng, dt, shape, np.roll(e, 1 + rank))
                w.case(bitwise, "%s_%s_r%d" % (op, dt, rank), op, [a, b])
            for op, out, part in unary_variants(dt):
                a = filled(rng, dt, shape, np.roll(e, rank))
                w.case(bitwise, "%s_%s_r%d" % (part, dt, rank), op, [a], out_dtype=out)
    for dt in ALL_DTYPES:
        counts = shift_counts(dt)
        for rank, shape in SHAPES.items():
            for op in shift_ops_of(dt):
                a = filled(rng, dt, shape, shift_values(rng, dt))
                b = filled(rng, dt, shape, np.roll(counts, 7 * rank))
                # Random counts of the full width are nearly all >= w: mix in small ones.
                b = from_bits(np.where(np.arange(b.size).reshape(shape) % 2 == 1,
                                       bits(b) % np.uint64(2 * width(dt) + 3), bits(b)).astype(unsigned_of(dt)), dt)
                w.case(shift_dml, "%s_%s_r%d_directml" % (op, dt, rank), op, [a, b], mode="directml")
                if rank in (1, 4, 8):
                    for mode in other_modes:
                        w.case(shift_modes, "%s_%s_r%d_%s" % (op, dt, rank, mode), op, [a, b], mode=mode)

    # -- Broadcasts (stride 0) in A, in B, in both, across ranks, 0-d scalars. --
    for dt in ALL_DTYPES:
        for bname, sa, sb in BROADCASTS:
            for op in binary_ops_of(dt):
                a, b = filled(rng, dt, sa, edges(dt)), filled(rng, dt, sb, edges(dt)[::-1])
                w.case(bitwise, "bcast_%s_%s_%s" % (bname, op, dt), op, [a, b])
        for op, out, part in unary_variants(dt):
            w.case(bitwise, "scalar_%s_%s" % (part, dt), op, [filled(rng, dt, (), edges(dt)[3:])], out_dtype=out)
    for dt in ALL_DTYPES:
        for bname, sa, sb in BROADCASTS:
            for op in shift_ops_of(dt):
                a = filled(rng, dt, sa, shift_values(rng, dt))
                b = filled(rng, dt, sb, shift_counts(dt)[::-1])
                w.case(shift_dml, "bcast_%s_%s_%s_directml" % (bname, op, dt), op, [a, b], mode="directml")

    # -- Edge values: every pair (A (n,1) against B (1,n): a broadcast in both). --
    for dt in ALL_DTYPES:
        e = from_bits(edges(dt), dt)
        for op in binary_ops_of(dt):
            w.case(bitwise, "edges_%s_%s" % (op, dt), op, [e.reshape(-1, 1), e.reshape(1, -1)],
                   comment="every pair of edge values (0, all ones, sign bits%s)" %
                   (", NaN classes, -0.0, subnormals, infinities" if np.dtype(dt).kind == "f" else ""))
        for op, out, part in unary_variants(dt):
            w.case(bitwise, "edges_%s_%s" % (part, dt), op, [e], out_dtype=out)
    # Shift counts: every value against every count 0 .. 2w+2, the maximum and more.
    for dt in ALL_DTYPES:
        if not shift_ops_of(dt):
            continue
        v = from_bits(shift_values(rng, dt), dt).reshape(-1, 1)
        c = from_bits(shift_counts(dt), dt).reshape(1, -1)
        for op in shift_ops_of(dt):
            for mode in ["directml", "default"] + other_modes:
                m = shift_dml if mode in ("directml", "default") else shift_modes
                w.case(m, "counts_%s_%s_%s" % (op, dt, mode), op, [v, c], mode=mode,
                       comment="every value against counts 0 .. 2w+2, the type's maximum and more" +
                       ("; no shift_overflow key: the default is DirectML's rule" if mode == "default" else ""))

    # -- Sizes past one chunk of chunk_bytes (each case 2 to 9 chunks, odd sizes). --
    def big(dt, chunks, extra=37):
        return (chunks * chunk_bytes) // np.dtype(dt).itemsize + extra

    big_cases = [("and", "uint8", 3), ("or", "int16", 4), ("xor", "float32", 5), ("and", "float64", 7),
                 ("xor", "int64", 2), ("or", "float16", 3), ("and", "uint32", 6)]
    for op, dt, k in big_cases:
        n = big(dt, k)
        a, b = filled(rng, dt, (n,), edges(dt)), filled(rng, dt, (n,))
        w.case(bitwise, "large_%s_%s_%d" % (op, dt, n), op, [a, b])
    for op, out, dt, k in [("not", None, "uint16", 3), ("not", None, "float64", 5),
                           ("popcount", None, "int32", 4), ("popcount", "uint32", "uint8", 9),
                           ("popcount", None, "float16", 3), ("popcount", "uint32", "uint64", 2)]:
        n = big(dt, k)
        w.case(bitwise, "large_%s%s_%s_%d" % (op, "_u32" if out else "", dt, n), op,
               [filled(rng, dt, (n,), edges(dt))], out_dtype=out)
    # Strided: broadcast rows, a broadcast middle dimension, and a 3-D case in both inputs.
    for op, dt, sa, sb in [("xor", "uint8", (131, 1, 1531), (1, 3, 1531)),
                           ("and", "float32", (389, 97), (97,)),
                           ("or", "int64", (3, 1, 257), (1, 61, 1)),
                           ("xor", "float16", (7, 3, 11, 1, 173), (1, 3, 1, 13, 173))]:
        a, b = filled(rng, dt, sa, edges(dt)), filled(rng, dt, sb, edges(dt))
        out_bytes = np.broadcast_shapes(sa, sb)
        w.case(bitwise, "large_bcast_%s_%s_%s" % (op, dt, "x".join(map(str, out_bytes))), op, [a, b])
    for op, dt, k in [("shl", "uint8", 3), ("shr", "uint16", 4), ("shl", "uint32", 5), ("shr", "uint64", 6)]:
        n = big(dt, k)
        a = filled(rng, dt, (n,), shift_values(rng, dt))
        b = from_bits((bits(filled(rng, dt, (n,), shift_counts(dt))) % np.uint64(2 * width(dt) + 9))
                      .astype(unsigned_of(dt)), dt)
        w.case(shift_dml, "large_%s_%s_%d_directml" % (op, dt, n), op, [a, b], mode="directml")
    a = filled(rng, "uint32", (97, 1, 211), shift_values(rng, "uint32"))
    b = from_bits(np.arange(0, 3 * 211, dtype="<u4").reshape(1, 3, 211) % np.uint32(70), "uint32")
    w.case(shift_dml, "large_bcast_shl_uint32_97x3x211_directml", "shl", [a, b], mode="directml")
    huge_cases = Manifest("huge", "past the directml backend's default 256 MiB buffer: run with that "
                          "default (tests/directml/run, DMLBITS_DIRECTML_SUITE_HUGE=1)", ["directml"])
    if huge:
        n = (256 << 20) + 4099
        w.case(huge_cases, "huge_not_uint8_%d" % n, "not", [filled(rng, "uint8", (n,))])
        w.case(huge_cases, "huge_popcount_uint8_%d" % n, "popcount", [filled(rng, "uint8", (n,))])

    # -- Older feature levels (the DirectML device is created with them as its minimum). --
    a, b = filled(rng, "uint16", (3, 5), edges("uint16")), filled(rng, "uint16", (3, 5))
    w.case(bitwise, "fl3_0_and_uint16", "and", [a, b], level="3_0")
    w.case(bitwise, "fl3_0_popcount_u32_uint32", "popcount", [filled(rng, "uint32", (2, 7), edges("uint32"))],
           out_dtype="uint32", level="3_0")
    w.case(bitwise, "fl4_1_xor_float64", "xor", [filled(rng, "float64", (9,), edges("float64")),
                                                 filled(rng, "float64", (9,))], level="4_1")
    a = filled(rng, "uint32", (2, 1, 3, 5), shift_values(rng, "uint32"))
    b = from_bits(np.arange(30, dtype="<u4").reshape(2, 3, 1, 5) * np.uint32(3), "uint32")
    w.case(shift_dml, "fl2_1_shl_uint32_4d_directml", "shl", [a, b], mode="directml", level="2_1",
           comment="shifts at 2_1 take exactly 4 dimensions")
    a = filled(rng, "uint64", (3, 5), shift_values(rng, "uint64"))
    b = from_bits(np.arange(15, dtype="<u8").reshape(3, 5) * np.uint64(9), "uint64")
    w.case(shift_dml, "fl4_1_shr_uint64_directml", "shr", [a, b], mode="directml", level="4_1")

    # -- The measured examples of directml-under-wine.md, typed in from the page. --
    for name, op, dt, a, c, r in [("u8_shl_32", "shl", "uint8", 0xF4, 32, 0xF4),
                                  ("u8_shl_35", "shl", "uint8", 0xF5, 35, 0xA8),
                                  ("u8_shl_41", "shl", "uint8", 0xF7, 41, 0x00),
                                  ("u16_shl_33", "shl", "uint16", 0xF3F3, 33, 0xE7E6),
                                  ("u64_shr_64", "shr", "uint64", 0xD69A5E00F2F2F2F2, 64, 0x00000000D69A5E00)]:
        a, c, r = (np.array([x], dtype=le(dt)) for x in (a, c, r))
        assert np.array_equal(expect_shift_np(op, a, c, "directml"), r), name
        w.hand(shift_dml, "measured_" + name, op, [a, c], r, mode="directml",
               comment="DirectML 1.15.4's result as measured (directml-under-wine.md)")

    # -- The self-check, run first: DirectML's documented examples, typed in from its pages
    # (directml-bitwise.md). A DirectML that computes nothing (a Mesa without descriptor
    # indexing: zeros, and every call succeeds) fails it, as does a wrong data path. --
    u8 = lambda x: np.array(x, dtype="u1")  # noqa: E731
    u32 = lambda x: np.array(x, dtype="<u4")  # noqa: E731
    w.hand(selfcheck, "doc_bit_count_u32", "popcount", [u32([[0, 123], [456, 789]])], u32([[0, 6], [4, 5]]),
           "DML_ELEMENT_WISE_BIT_COUNT_OPERATOR_DESC example", out_dtype="uint32")
    w.hand(selfcheck, "doc_bit_not_u8", "not", [u8([[0, 128], [42, 255]])], u8([[255, 127], [213, 0]]),
           "DML_ELEMENT_WISE_BIT_NOT_OPERATOR_DESC example")
    w.hand(selfcheck, "doc_bit_xor_u8", "xor", [u8([[0, 128], [42, 255]]), u8([[255, 128], [15, 240]])],
           u8([[255, 0], [37, 15]]), "the corrected XOR example")
    w.hand(selfcheck, "hand_and_broadcast_u32", "and", [u32([[0xFFFFFFFF], [0x0F0F0F0F]]), u32([0x12345678, 0xCAFEF00D])],
           u32([[0x12345678, 0xCAFEF00D], [0x02040608, 0x0A0E000D]]), "by hand: a broadcast in both inputs")

    # -- Refusals: what DirectML's CreateOperator refuses, dmlbits' validation refuses. --
    # Each data type an operator's newest tier does not take, each output type it does not give
    # (of four that stand for the kinds), and 9 dimensions for every operator.
    for dt in ALL_DTYPES:
        x = filled(rng, dt, (3,))
        for o in prog.ops:
            if dt not in prog.input_dtypes(o["verb"]):
                w.refusal(bitwise, "refuse_%s_%s" % (o["verb"], dt), o["verb"], [x] * o["arity"], "data type")
    x = filled(rng, "uint8", (3,))
    for o in prog.ops:
        if o["default_output_type"] is None:
            continue
        for out in ["uint16", "int32", "float32", "uint64"]:
            if out not in prog.output_dtypes(o["verb"]):
                w.refusal(bitwise, "refuse_%s_out_%s" % (o["verb"], out), o["verb"], [x] * o["arity"],
                          "output data type", out_dtype=out)
    nine = filled(rng, "uint8", (1, 2, 1, 2, 1, 2, 1, 2, 3))
    for op in binary_ops + shift_ops + unary_ops:
        w.refusal(bitwise, "refuse_%s_9d" % op, op, [nine] * prog.by_verb[op]["arity"], "more than 8 dimensions")

    return [selfcheck, bitwise, shift_dml, shift_modes] + ([huge_cases] if huge else [])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out")
    parser.add_argument("--chunk-bytes", type=int, default=65536)
    parser.add_argument("--huge", action="store_true")
    parser.add_argument("--dmlbits", help="the binary whose operator table to cover (default $DMLBITS)")
    parser.add_argument("--ops-json", help="a saved `dmlbits ops --json` instead of running the binary")
    args = parser.parse_args()
    global PROGRAM
    PROGRAM = make_goldens.program(args.dmlbits, args.ops_json)
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".npy") or f.endswith(".json"):
            os.remove(os.path.join(out_dir, f))
    w = Writer(out_dir)
    manifests = build(w, np.random.default_rng(SEED), args.chunk_bytes, args.huge, PROGRAM)
    for m in manifests:
        doc = {"generator": "scripts/make_directml_suite.py", "seed": SEED, "chunk_bytes": args.chunk_bytes,
               "note": m.note, "backends": m.backends, "cases": m.cases}
        if m.needs:
            doc["needs"] = m.needs
        with open(os.path.join(out_dir, m.name + ".json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print("make_directml_suite: %s.json: %d cases" % (m.name, len(m.cases)))
    print("make_directml_suite: %d files, %.1f MB in %s" % (len(os.listdir(out_dir)), w.bytes / 1e6, out_dir))


if __name__ == "__main__":
    main()
