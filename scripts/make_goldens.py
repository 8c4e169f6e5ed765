#!/usr/bin/python3
"""Writes testdata/golden/: small .npy inputs, the outputs dmlbits must produce, manifest.json (the
operators) and expressions.json (expressions of them, as `dmlbits eval` runs them).

Expected values come from NumPy and Python integers, never from dmlbits. Every operator works on
the raw bits of its elements, so the computation is done on the unsigned integer of the element
width (a float32 is viewed as uint32) and the result viewed back. Shifts are computed with Python
integers and an explicit width mask, deliberately not with NumPy's own shift functions. For counts
>= the width: --shift-overflow zero gives 0, wrap shifts by count % width, and directml (the
default) follows what DirectML 1.15.4 was measured to compute (shared/reference/
directml-under-wine.md, "Shift counts at or above the element width"): up to 32 bits the element
as a 32-bit lane shifted by count & 31 and cut to its width; 64 bits, c = count & 0xffffffff, a
shift by c if c < 32, else by 32 and then by c & 31. Popcount counts the
bits of the encoding (two's complement for signed types, the IEEE pattern for floats) with
np.unpackbits, since NumPy 1.24 has no bitwise_count (and NumPy's counts |x| for signed types).

The operators, the data types each takes, their output types and which of them shift come from
the program (`dmlbits ops --json`, the operator table), never from a list here: every operator
it lists gets a case for each data type and output type (and each --shift-overflow mode of a
shift), and an operator without a NumPy model in MODELS stops the generator with an error.

Usage: make_goldens.py [--out DIR] [--dmlbits PATH | --ops-json FILE]
  --out       default: testdata/golden beside this script's project
  --dmlbits   the binary to ask for its operator table (default: $DMLBITS, else build/dmlbits)
  --ops-json  a file holding the output of `dmlbits ops --json` instead
The output is deterministic: running it twice writes identical bytes.
"""

import argparse
import json
import os
import subprocess
import sys

import numpy as np

SEED = 20240601

# NumPy dtypes of the 11 DirectML data types, little-endian as dmlbits writes them (the program's
# dtype table must list the same: Program checks it).
ALL_DTYPES = ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
              "float16", "float32", "float64"]
UNSIGNED = ["uint8", "uint16", "uint32", "uint64"]


class Program:
    """The operator table of the program under test, from `dmlbits ops --json`: the operators
    (in table order) and, by verb, what each takes at the newest feature level. Only names and
    properties come from it; every expected value is computed here."""

    def __init__(self, doc):
        self.doc = doc
        names = [d["numpy"] for d in doc["dtypes"]]
        if sorted(names) != sorted(ALL_DTYPES):
            raise SystemExit("dmlbits lists the data types %s; the generators know %s: teach them the new ones"
                             % (names, ALL_DTYPES))
        self.numpy = {d["name"]: d["numpy"] for d in doc["dtypes"]}
        self.ops = doc["ops"]
        self.verbs = [o["verb"] for o in self.ops]
        self.by_verb = {o["verb"]: o for o in self.ops}
        self.shift_modes = doc["shift_overflow_modes"]  # the default first
        self.default_shift_mode = self.shift_modes[0]

    def newest(self, verb):
        return self.by_verb[verb]["tiers"][-1]

    def input_dtypes(self, verb):
        """NumPy names of the data types the newest tier takes, in ALL_DTYPES order."""
        take = {self.numpy[t] for t in self.newest(verb)["input_types"]}
        return [d for d in ALL_DTYPES if d in take]

    def output_dtypes(self, verb):
        """[None] when the output has the input's type; else the output types, the default first
        (None stands for it: no --out-dtype)."""
        o = self.by_verb[verb]
        if o["default_output_type"] is None:
            return [None]
        default = self.numpy[o["default_output_type"]]
        others = [self.numpy[t] for t in self.newest(verb)["output_types"] if self.numpy[t] != default]
        return [None] + others

    def default_output(self, verb, dtype):
        o = self.by_verb[verb]
        return dtype if o["default_output_type"] is None else self.numpy[o["default_output_type"]]

    def require_models(self, models, where):
        """Stops with an error naming each listed operator `models` has no entry for."""
        missing = [v for v in self.verbs if v not in models]
        if missing:
            raise SystemExit("\n".join("operator '%s' has no NumPy model in %s: add one" % (v, where)
                                        for v in missing))
        modes = [m for m in self.shift_modes if m not in SHIFT_MODES_MODELLED]
        if modes:
            raise SystemExit("--shift-overflow mode(s) %s have no NumPy model in %s: add them" % (modes, where))


def program(dmlbits=None, ops_json=None):
    """The Program of the binary `dmlbits` (default $DMLBITS, else build/dmlbits of this project)
    or of a saved `dmlbits ops --json` document."""
    if ops_json:
        with open(ops_json, encoding="utf-8") as f:
            return Program(json.load(f))
    here = os.path.dirname(os.path.abspath(__file__))
    exe = dmlbits or os.environ.get("DMLBITS") or os.path.join(here, "..", "build", "dmlbits")
    try:
        r = subprocess.run([exe, "ops", "--json"], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit("cannot read the operator table from %s ops --json (%s): give --dmlbits or set DMLBITS"
                         % (exe, e))
    return Program(json.loads(r.stdout))


def short_dtype(dtype):
    """uint32 -> u32, int8 -> i8, float16 -> f16 (case names)."""
    return dtype.replace("uint", "u").replace("int", "i").replace("float", "f")


def le(dtype):
    return np.dtype(dtype).newbyteorder("<")


def unsigned_of(dtype):
    return le("u%d" % np.dtype(dtype).itemsize)


def width(dtype):
    return np.dtype(dtype).itemsize * 8


def bits(x):
    """The raw bits of x as unsigned integers of the same width (same shape)."""
    x = np.ascontiguousarray(x)
    return x.view(unsigned_of(x.dtype))


def from_bits(u, dtype):
    return np.ascontiguousarray(u).view(le(dtype))


# ---- The semantics, computed independently of dmlbits ----

def expect_logic(op, a, b):
    ua, ub = bits(a), bits(b)
    if op == "and":
        r = ua & ub
    elif op == "or":
        r = ua | ub
    elif op == "xor":
        r = ua ^ ub
    else:
        raise ValueError(op)
    return from_bits(r, a.dtype)


def expect_not(a):
    return from_bits(~bits(a), a.dtype)


def shift_directml(op, x, c, w):
    """DirectML 1.15.4's measured rule for one element x (w bits) and count c (Python ints)."""
    def by(v, n, lane_bits):
        return ((v << n) & ((1 << lane_bits) - 1)) if op == "shl" else (v >> n)
    if w <= 32:
        return by(x, c & 31, 32) & ((1 << w) - 1)  # a 32-bit lane, cut back to the element
    c &= 0xFFFFFFFF
    if c < 32:
        return by(x, c, 64)
    return by(by(x, 32, 64), c & 31, 64)


def expect_shift(op, a, b, mode):
    """Elementwise with Python ints: exact, and independent of NumPy's shift rules."""
    w = width(a.dtype)
    mask = (1 << w) - 1
    ua, ub = np.broadcast_arrays(bits(a), bits(b))
    out = np.zeros(ua.shape, dtype=unsigned_of(a.dtype))
    for idx in np.ndindex(ua.shape):
        x, c = int(ua[idx]), int(ub[idx])
        if mode == "directml":
            out[idx] = shift_directml(op, x, c, w)
            continue
        if c >= w:
            if mode == "zero":
                out[idx] = 0
                continue
            c %= w
        out[idx] = ((x << c) & mask) if op == "shl" else (x >> c)
    return from_bits(out, a.dtype)


def expect_popcount(a, out_dtype):
    a = np.ascontiguousarray(a)
    k = a.dtype.itemsize
    as_bytes = a.reshape(-1).view(np.uint8).reshape(-1, k)
    counts = np.unpackbits(as_bytes, axis=1).sum(axis=1)
    return counts.reshape(a.shape).astype(le(out_dtype))


# The NumPy model of each operator, by verb: model(inputs, out_dtype, shift_mode) -> the expected
# array. An operator the program lists without a model here stops the generator (require_models).
MODELS = {
    "and": lambda x, out, mode: expect_logic("and", *x),
    "or": lambda x, out, mode: expect_logic("or", *x),
    "xor": lambda x, out, mode: expect_logic("xor", *x),
    "not": lambda x, out, mode: expect_not(x[0]),
    "popcount": lambda x, out, mode: expect_popcount(x[0], out),
    "shl": lambda x, out, mode: expect_shift("shl", x[0], x[1], mode),
    "shr": lambda x, out, mode: expect_shift("shr", x[0], x[1], mode),
}
# The --shift-overflow modes expect_shift computes.
SHIFT_MODES_MODELLED = {"zero", "wrap", "directml"}


# ---- Inputs ----

def special_float_bits(dtype):
    """NaN (quiet, signalling, with payload, negative), +-0.0, +-inf, denormals, extremes."""
    w = width(dtype)
    if w == 16:
        pats = [0x7E00, 0x7C01, 0x7D2A, 0xFE00, 0x8000, 0x0000, 0x7C00, 0xFC00, 0x0001, 0x83FF, 0x7BFF,
                0x3C00]
    elif w == 32:
        pats = [0x7FC00000, 0x7F800001, 0x7FA5A5A5, 0xFFC00000, 0x80000000, 0x00000000, 0x7F800000,
                0xFF800000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF, 0x3F800000]
    else:
        pats = [0x7FF8000000000000, 0x7FF0000000000001, 0x7FFDEADBEEF00001, 0xFFF8000000000000,
                0x8000000000000000, 0, 0x7FF0000000000000, 0xFFF0000000000000, 1, 0x800FFFFFFFFFFFFF,
                0x7FEFFFFFFFFFFFFF, 0x3FF0000000000000]
    return np.array(pats, dtype=unsigned_of(dtype))


def random_bits(rng, dtype, shape):
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    raw = rng.integers(0, 256, size=n, dtype=np.uint8)
    return raw.view(le(dtype)).reshape(shape).copy()


def edge_values(dtype):
    """All-zeros, all-ones, the top bit alone, the low bit alone, alternating patterns."""
    w = width(dtype)
    m = (1 << w) - 1
    pats = [0, m, 1 << (w - 1), 1, int("55" * (w // 8), 16), int("AA" * (w // 8), 16), m >> 1]
    return np.array(pats, dtype=unsigned_of(dtype))


def interesting(rng, dtype, n_random):
    """Edge patterns (plus float specials) followed by random bit patterns, as dtype."""
    parts = [edge_values(dtype)]
    if np.dtype(dtype).kind == "f":
        parts.append(special_float_bits(dtype))
    parts.append(bits(random_bits(rng, dtype, (n_random,))))
    return from_bits(np.concatenate(parts), dtype)


def shift_counts(dtype):
    """0, 1, width-1, width, width+1, 2*width, 2*width+1 and large counts (wrap keeps the
    remainder of the whole count: 2^40+3 wraps to 3, not to the low 5 bits)."""
    w = width(dtype)
    m = (1 << w) - 1
    counts = [0, 1, w // 2, w - 1, w, w + 1, 2 * w, 2 * w + 1, 3 * w - 1]
    if w == 8:
        counts += [200, 255, 9, 33]
    elif w == 16:
        counts += [200, 1000, 65535, 17, 33]
    elif w == 32:
        counts += [200, 33, 2**31 + 3, m]
    else:
        counts += [200, 2**40, 2**40 + 3, 2**63 + 5, m, 65]
    return np.array(counts, dtype=unsigned_of(dtype))


def edge_counts(dtype):
    """Every count from 0 to 2*width+2 and the type's maximum; for the directml rule also where
    its 32-bit lane wraps (8 and 16 bits: every count to 95; 32 bits: to 66) and, for 64 bits,
    counts whose low 32 bits are small, 32 and more, or all ones, under a nonzero high word."""
    w = width(dtype)
    m = (1 << w) - 1
    counts = list(range(2 * w + 3))
    if w < 32:
        counts = list(range(96)) + [m - 32, m - 31, m - 1]
    elif w == 32:
        counts = list(range(67)) + [2**31, 2**31 + 33, m - 31, m - 1]
    else:
        counts += [2**32 - 33, 2**32 - 32, 2**32 - 1, 2**32, 2**32 + 3, 2**32 + 33, 2**40, 2**40 + 64,
                   2**63 + 5, m - 31, m - 1]
    return np.array(counts + [m], dtype=unsigned_of(dtype))


def measured_value(dtype):
    """The value DirectML 1.15.4 was measured on (directml-under-wine.md), per width."""
    return {8: 0xF4, 16: 0xF3F3, 32: 0xF2F2F2F2, 64: 0xD69A5E00F2F2F2F2}[width(dtype)]


class Writer:
    def __init__(self, out_dir):
        self.out_dir = out_dir
        self.cases = []
        self.expression_cases = []
        self.names = set()

    def save(self, name, array):
        path = name + ".npy"
        arr = np.ascontiguousarray(array)
        assert arr.dtype.byteorder != ">", name  # dmlbits writes little-endian; keep inputs alike
        np.save(os.path.join(self.out_dir, path), arr, allow_pickle=False)
        return path

    def case(self, name, op, inputs, expected, args=(), note=""):
        """inputs: arrays (saved as NAME_a.npy, NAME_b.npy) or strings (CLI literals)."""
        assert name not in self.names, name
        self.names.add(name)
        paths = []
        for label, x in zip("ab", inputs):
            paths.append(x if isinstance(x, str) else self.save("%s_%s" % (name, label), x))
        entry = {"name": name, "op": op, "inputs": paths}
        # The manifest is in `dmlbits check`'s format: each CLI option becomes its case key.
        args = list(args)
        for flag, value in zip(args[::2], args[1::2]):
            entry[CHECK_KEYS[flag]] = value
        entry["expected"] = self.save(name + "_expected", expected)
        if note:
            entry["comment"] = note
        self.cases.append(entry)


    def expression_case(self, name, expression, inputs, expected, args=(), note=""):
        """An expression case (expressions.json): inputs {name: array or CLI literal (a string)
        or JSON array literal (a list)}, arrays saved as NAME_<name>.npy."""
        assert name not in self.names, name
        self.names.add(name)
        bound = {}
        for key, x in inputs.items():
            bound[key] = x if isinstance(x, (str, list)) else self.save("%s_%s" % (name, key), x)
        entry = {"name": name, "expression": expression, "inputs": bound}
        args = list(args)
        for flag, value in zip(args[::2], args[1::2]):
            entry[CHECK_KEYS[flag]] = value
        entry["expected"] = self.save(name + "_expected", expected)
        if note:
            entry["comment"] = note
        self.expression_cases.append(entry)


# CLI option -> `dmlbits check` manifest key.
CHECK_KEYS = {"--out-dtype": "out_dtype", "--shift-overflow": "shift_overflow", "--feature-level": "feature_level"}


def build(w, rng, prog):
    prog.require_models(MODELS, "scripts/make_goldens.py (MODELS)")
    shift_modes = prog.shift_modes

    def model(verb, inputs, out=None, mode=None):
        return MODELS[verb](inputs, out, mode)

    # -- Every operator x every data type and output type its newest tier takes (the default level
    # is newer), binary operators first; the shifts after, in each --shift-overflow mode. --
    plain = sorted((o for o in prog.ops if not o["shift"]), key=lambda o: -o["arity"])
    for dt in ALL_DTYPES:
        for o in plain:
            op = o["verb"]
            if dt not in prog.input_dtypes(op):
                continue
            if o["arity"] == 2:
                a = interesting(rng, dt, 13)
                b = from_bits(bits(random_bits(rng, dt, a.shape)), dt)
                # Pair edge patterns with themselves and their complements too.
                b[:3] = a[:3]
                b[3:5] = expect_not(a[3:5])
                # 20 (integers) or 32 (floats) elements: a (4, n) matrix.
                a, b = a.reshape(4, -1), b.reshape(4, -1)
                w.case("%s_%s" % (op, dt), op, [a, b], model(op, [a, b], prog.default_output(op, dt)))
                continue
            a = interesting(rng, dt, 9)
            if np.dtype(dt).kind == "i":
                info = np.iinfo(dt)
                a[:4] = np.array([-1, info.min, info.max, -2], dtype=dt)
            for out in prog.output_dtypes(op):
                if out is None:
                    default = prog.default_output(op, dt)
                    w.case("%s_%s" % (op, dt), op, [a], model(op, [a], default),
                           note="" if o["default_output_type"] is None else "default output dtype %s" % default)
                else:
                    w.case("%s_%s_out_%s" % (op, dt, short_dtype(out)), op, [a], model(op, [a], out),
                           args=["--out-dtype", out])

    shifts = [o["verb"] for o in prog.ops if o["shift"]]
    for dt in ALL_DTYPES:
        for op in shifts:
            if dt not in prog.input_dtypes(op):
                continue
            counts = shift_counts(dt)
            # Top bit set: a logical right shift must not smear it.
            top = np.array(1 << (width(dt) - 1), dtype=unsigned_of(dt))
            a = from_bits(bits(random_bits(rng, dt, counts.shape)) | top, dt)
            a[0] = from_bits(edge_values(dt)[1:2], dt)[0]  # all ones
            for mode in shift_modes:
                w.case("%s_%s_%s" % (op, dt, mode), op, [a, counts], model(op, [a, counts], mode=mode),
                       args=["--shift-overflow", mode])
            # Without --shift-overflow: the default mode.
            w.case("%s_%s_default_mode" % (op, dt), op, [a, counts],
                   model(op, [a, counts], mode=prog.default_shift_mode),
                   note="no shift_overflow: the default, %s" % prog.default_shift_mode)
            # Every count from 0 to 2*width+2 and the maximum against one value, every mode.
            all_counts = np.array(list(range(2 * width(dt) + 3)) + [(1 << width(dt)) - 1], dtype=unsigned_of(dt))
            v = from_bits(np.array([0xA5A5A5A5A5A5A5A5 & ((1 << width(dt)) - 1)], unsigned_of(dt)), dt)
            for mode in shift_modes:
                w.case("%s_%s_every_count_%s" % (op, dt, mode), op, [v, all_counts],
                       model(op, [v, all_counts], mode=mode), args=["--shift-overflow", mode],
                       note="A (1,) broadcast against every count")

    # -- Broadcasting (NumPy rules). --
    a = random_bits(rng, "uint16", (2, 3, 4))
    b = random_bits(rng, "uint16", (4,))
    w.case("bcast_and_u16_234_4", "and", [a, b], expect_logic("and", a, b))
    w.case("bcast_xor_u16_4_234", "xor", [b, a], expect_logic("xor", b, a))
    a = random_bits(rng, "int32", (3, 1))
    b = random_bits(rng, "int32", (1, 4))
    w.case("bcast_or_i32_31_14", "or", [a, b], expect_logic("or", a, b))
    a = random_bits(rng, "float32", ())
    b = random_bits(rng, "float32", (5,))
    w.case("bcast_xor_f32_0d_5", "xor", [a, b], expect_logic("xor", a, b))
    w.case("bcast_and_f32_5_0d", "and", [b, a], expect_logic("and", b, a))
    a = random_bits(rng, "uint64", (2, 1, 3))
    b = random_bits(rng, "uint64", (4, 1))
    w.case("bcast_or_u64_213_41", "or", [a, b], expect_logic("or", a, b))
    a = random_bits(rng, "uint32", (4, 3))
    b = np.array([0, 31, 32], dtype="<u4")
    for mode in shift_modes:
        w.case("bcast_shl_u32_43_counts3_%s" % mode, "shl", [a, b], expect_shift("shl", a, b, mode),
               args=["--shift-overflow", mode])
    a = random_bits(rng, "uint8", (3, 1))
    b = np.array([[0, 1, 7, 8, 9]], dtype="u1")
    for mode in shift_modes:
        w.case("bcast_shr_u8_31_15_%s" % mode, "shr", [a, b], expect_shift("shr", a, b, mode),
               args=["--shift-overflow", mode])
    a = random_bits(rng, "int8", (2, 2, 1, 3))
    b = random_bits(rng, "int8", (2, 1, 3))
    w.case("bcast_xor_i8_2213_213", "xor", [a, b], expect_logic("xor", a, b))

    # -- 0-d. --
    for dt in ["uint8", "int64", "float16"]:
        a = random_bits(rng, dt, ())
        b = random_bits(rng, dt, ())
        w.case("scalar_and_%s" % dt, "and", [a, b], expect_logic("and", a, b))
        w.case("scalar_not_%s" % dt, "not", [a], expect_not(a))
        w.case("scalar_popcount_%s" % dt, "popcount", [a], expect_popcount(a, "uint8"))
    a = np.array(0x81, dtype="u1")
    b = np.array(9, dtype="u1")
    for mode in shift_modes:
        w.case("scalar_shl_u8_9_%s" % mode, "shl", [a, b], expect_shift("shl", a, b, mode),
               args=["--shift-overflow", mode])

    # -- Empty tensors (a zero dimension). --
    a = np.zeros((0,), dtype="<u4")
    w.case("empty_and_u32_0", "and", [a, a.copy()], a.copy())
    a = np.zeros((2, 0, 3), dtype="<f8")
    w.case("empty_not_f64_203", "not", [a], a.copy())
    w.case("empty_popcount_f64_203", "popcount", [a], np.zeros((2, 0, 3), dtype="u1"))
    w.case("empty_popcount_f64_203_out_u32", "popcount", [a], np.zeros((2, 0, 3), dtype="<u4"),
           args=["--out-dtype", "uint32"])
    a = np.zeros((0, 3), dtype="<u2")
    b = np.array([1, 2, 3], dtype="<u2")
    w.case("empty_bcast_shl_u16_03_3", "shl", [a, b], np.zeros((0, 3), dtype="<u2"))
    a = np.zeros((1, 0), dtype="i1")
    b = np.array([[1], [2], [3], [4]], dtype="i1")
    w.case("empty_bcast_or_i8_10_41", "or", [a, b], np.zeros((4, 0), dtype="i1"))

    # -- 8 dimensions (the most DirectML takes). --
    shape8 = (2, 1, 2, 1, 2, 1, 2, 3)
    a = random_bits(rng, "uint16", shape8)
    b = random_bits(rng, "uint16", shape8)
    w.case("rank8_xor_u16", "xor", [a, b], expect_logic("xor", a, b))
    w.case("rank8_not_u16", "not", [a], expect_not(a))
    w.case("rank8_popcount_u16", "popcount", [a], expect_popcount(a, "uint8"))
    b = random_bits(rng, "uint16", (3,))
    w.case("rank8_bcast_and_u16_3", "and", [a, b], expect_logic("and", a, b))
    a = random_bits(rng, "float64", (2, 1, 1, 1, 1, 1, 1, 1))
    b = random_bits(rng, "float64", (1, 2, 1, 2, 1, 1, 1, 2))
    w.case("rank8_bcast_or_f64", "or", [a, b], expect_logic("or", a, b))
    a = random_bits(rng, "uint32", shape8)
    b = np.array([0, 31, 33], dtype="<u4")
    w.case("rank8_bcast_shr_u32_wrap", "shr", [a, b], expect_shift("shr", a, b, "wrap"),
           args=["--shift-overflow", "wrap"])

    # -- Older feature levels, where their tier accepts the case. --
    a = random_bits(rng, "uint32", (2, 1, 3, 2))
    b = np.array([0, 5, 31, 32, 40, 1], dtype="<u4").reshape(1, 2, 3, 1)
    w.case("fl2_1_shl_u32_4d", "shl", [a, b], expect_shift("shl", a, b, "directml"), args=["--feature-level", "2_1"],
           note="shifts at 2_1 take exactly 4 dimensions; the default mode, directml")
    w.case("fl2_1_shl_u32_4d_zero", "shl", [a, b], expect_shift("shl", a, b, "zero"),
           args=["--feature-level", "2_1", "--shift-overflow", "zero"])
    w.case("fl2_1_shr_u32_4d_wrap", "shr", [a, b], expect_shift("shr", a, b, "wrap"),
           args=["--feature-level", "2_1", "--shift-overflow", "wrap"])
    a = random_bits(rng, "uint8", (3, 4))
    b = random_bits(rng, "uint8", (3, 4))
    w.case("fl3_0_and_u8", "and", [a, b], expect_logic("and", a, b), args=["--feature-level", "3_0"])
    w.case("fl3_0_popcount_u8_out_u32", "popcount", [a], expect_popcount(a, "uint32"),
           args=["--feature-level", "3_0", "--out-dtype", "uint32"])
    a = random_bits(rng, "int32", (5,))
    b = random_bits(rng, "int32", (5,))
    w.case("fl4_1_xor_i32", "xor", [a, b], expect_logic("xor", a, b), args=["--feature-level", "4_1"])
    a = shift_counts("uint64")
    b = np.array(3, dtype="<u8")
    w.case("fl4_1_shl_u64", "shl", [a, b], expect_shift("shl", a, b, "zero"),
           args=["--feature-level", "DML_FEATURE_LEVEL_4_1"])

    # -- Literal operands (they take the other operand's dtype). --
    a = interesting(rng, "uint16", 5)
    w.case("literal_xor_u16_0xff", "xor", [a, "0xff"], expect_logic("xor", a, np.array(0xFF, "<u2")))
    a = interesting(rng, "uint8", 5)
    w.case("literal_shl_u8_3", "shl", [a, "3"], expect_shift("shl", a, np.array(3, "u1"), "zero"))
    w.case("literal_shr_u8_9_wrap", "shr", [a, "9"], expect_shift("shr", a, np.array(9, "u1"), "wrap"),
           args=["--shift-overflow", "wrap"])
    a = random_bits(rng, "int16", (2, 3))
    w.case("literal_and_i16_array", "and", [a, "[1,2,3]"], expect_logic("and", a, np.array([1, 2, 3], "<i2")))

    # -- The documented examples (directml-bitwise.md), values typed in from the page. --
    w.case("doc_bit_count_u32", "popcount", [np.array([[0, 123], [456, 789]], dtype="<u4")],
           np.array([[0, 6], [4, 5]], dtype="<u4"), args=["--out-dtype", "uint32"],
           note="DML_ELEMENT_WISE_BIT_COUNT_OPERATOR_DESC example")
    w.case("doc_bit_not_u8", "not", [np.array([[0, 128], [42, 255]], dtype="u1")],
           np.array([[255, 127], [213, 0]], dtype="u1"), note="DML_ELEMENT_WISE_BIT_NOT_OPERATOR_DESC example")
    w.case("doc_bit_xor_u8", "xor", [np.array([[0, 128], [42, 255]], dtype="u1"),
                                     np.array([[255, 128], [15, 240]], dtype="u1")],
           np.array([[255, 0], [37, 15]], dtype="u1"),
           note="the corrected XOR case (the published page shows NOT's example)")
    # Hand-computed: two's-complement counts of negative INT8, bits of float patterns.
    w.case("hand_popcount_i8", "popcount", [np.array([-1, -128, 127, 0, -2], dtype="i1")],
           np.array([8, 1, 7, 0, 7], dtype="u1"))
    w.case("hand_popcount_f32", "popcount",
           [np.array([-0.0, 1.0, -np.inf, np.nan], dtype="<f4")],  # 0x80000000 0x3F800000 0xFF800000 0x7FC00000
           np.array([1, 7, 9, 9], dtype="u1"))
    w.case("hand_and_f32_sign_mask", "and", [np.array([-2.5, 3.0, -0.0], dtype="<f4"),
                                              np.array([0x7FFFFFFF] * 3, dtype="<u4").view("<f4")],
           np.array([2.5, 3.0, 0.0], dtype="<f4"), note="clearing the sign bit is fabs")

    # -- Shift counts at and beyond the width in the directml mode (the default). --
    # The results DirectML 1.15.4 gave (directml-under-wine.md), typed in from the page.
    w.case("measured_directml_shl_u8", "shl", [np.array([0xF4, 0xF5, 0xF7], dtype="u1"),
                                               np.array([32, 35, 41], dtype="u1")],
           np.array([0xF4, 0xA8, 0x00], dtype="u1"), note="measured on DirectML 1.15.4; the default mode")
    w.case("measured_directml_shl_u16", "shl", [np.array([0xF3F3], dtype="<u2"), np.array([33], dtype="<u2")],
           np.array([0xE7E6], dtype="<u2"), args=["--shift-overflow", "directml"],
           note="measured on DirectML 1.15.4")
    w.case("measured_directml_shr_u64", "shr", [np.array([0xD69A5E00F2F2F2F2], dtype="<u8"),
                                                np.array([64], dtype="<u8")],
           np.array([0x00000000D69A5E00], dtype="<u8"), args=["--shift-overflow", "directml"],
           note="measured on DirectML 1.15.4")
    # Edge counts (edge_counts) against a column of values: all ones, the top bit, 1, the value
    # DirectML was measured on, alternating bits; every mode, each broadcast (k, 1) x (n,).
    for dt in UNSIGNED:
        wd = width(dt)
        values = np.array([(1 << wd) - 1, 1 << (wd - 1), 1, measured_value(dt),
                           0xA5A5A5A5A5A5A5A5 & ((1 << wd) - 1)], dtype=unsigned_of(dt)).reshape(-1, 1)
        counts = edge_counts(dt)
        for op in ["shl", "shr"]:
            for mode in shift_modes:
                w.case("%s_%s_edge_counts_%s" % (op, dt, mode), op, [values, counts],
                       expect_shift(op, values, counts, mode), args=["--shift-overflow", mode],
                       note="(5, 1) values x edge counts")


def build_expressions(w, rng):
    """Expressions of the operators (dmlbits eval, a manifest's "expression" cases), each
    expected value composed from the operators' models above: a graph must compute what its
    operators compute one after the other."""
    a8, b8 = interesting(rng, "uint8", 41), interesting(rng, "uint8", 41)
    w.expression_case("expr_popcount_xor_uint8", "popcount(a ^ b)", {"a": a8, "b": b8},
                      expect_popcount(expect_logic("xor", a8, b8), "uint8"), note="a Hamming distance")
    w.expression_case("expr_popcount_xor_uint8_out_uint32", "popcount(a ^ b)", {"a": a8, "b": b8},
                      expect_popcount(expect_logic("xor", a8, b8), "uint32"), args=["--out-dtype", "uint32"])
    a32, b32 = interesting(rng, "int32", 41), interesting(rng, "int32", 41)
    w.expression_case("expr_and_not_int32", "a & ~b", {"a": a32, "b": b32},
                      expect_logic("and", a32, expect_not(b32)))
    a16 = interesting(rng, "uint16", 41)
    three, ff = np.full_like(a16, 3), np.full_like(a16, 0xFF)
    w.expression_case("expr_shr_mask_uint16", "(a >> 3) & 0xff", {"a": a16},
                      expect_logic("and", expect_shift("shr", a16, three, "directml"), ff),
                      note="literals take the dtype of the operand they meet")
    a64, b64, c64 = (interesting(rng, "uint64", 41) for _ in range(3))
    x = expect_logic("xor", a64, b64)
    w.expression_case("expr_shared_xor_uint64", "((a ^ b) | c) & ~((a ^ b) & c)", {"a": a64, "b": b64, "c": c64},
                      expect_logic("and", expect_logic("or", x, c64), expect_not(expect_logic("and", x, c64))),
                      note="a ^ b is one node, used twice")
    m = random_bits(rng, "uint32", (4, 5))
    row, col = random_bits(rng, "uint32", (5,)), random_bits(rng, "uint32", (4, 1))
    w.expression_case("expr_broadcast_uint32", "(m ^ row) & col", {"m": m, "row": row, "col": col},
                      expect_logic("and", expect_logic("xor", m, row), np.broadcast_to(col, (4, 5))),
                      note="(4, 5) with (5,) and (4, 1)")
    g = random_bits(rng, "uint8", (3, 4))
    lit = np.array([1, 2, 4, 128], np.uint8)
    w.expression_case("expr_literal_list_uint8", "(g | [1, 2, 4, 128]) ^ k", {"g": g, "k": [3, 5, 7, 9]},
                      expect_logic("xor", expect_logic("or", g, np.broadcast_to(lit, (3, 4))),
                                   np.broadcast_to(np.array([3, 5, 7, 9], np.uint8), (3, 4))),
                      note="a list in the text and one bound to a name, both in g's dtype")
    f, h = interesting(rng, "float32", 29), interesting(rng, "float32", 29)
    w.expression_case("expr_popcount_and_float32", "popcount(f & h, out_dtype=uint32)", {"f": f, "h": h},
                      expect_popcount(expect_logic("and", f, h), "uint32"), note="the bits of floats")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(here, "..", "testdata", "golden"))
    parser.add_argument("--dmlbits", help="the binary whose operator table to cover (default $DMLBITS)")
    parser.add_argument("--ops-json", help="a saved `dmlbits ops --json` instead of running the binary")
    args = parser.parse_args()
    prog = program(args.dmlbits, args.ops_json)
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    # Stale cases from an older run must not linger.
    for f in os.listdir(out_dir):
        if f.endswith(".npy") or f in ("manifest.json", "expressions.json"):
            os.remove(os.path.join(out_dir, f))

    w = Writer(out_dir)
    build(w, np.random.default_rng(SEED), prog)
    manifest = {
        "generator": "scripts/make_goldens.py",
        "seed": SEED,
        "note": "paths are relative to this file; an input that does not end in .npy is a CLI literal",
        "cases": w.cases,
    }
    with open(os.path.join(out_dir, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    # The expressions in a manifest of their own: manifest.json's cases are single operators, the
    # CLI's operator commands (tests/numpy/golden_test.py runs each as one).
    build_expressions(w, np.random.default_rng(SEED + 46))
    expressions = {
        "generator": "scripts/make_goldens.py",
        "seed": SEED + 46,
        "note": "expressions of the operators (dmlbits eval); paths are relative to this file",
        "cases": w.expression_cases,
    }
    with open(os.path.join(out_dir, "expressions.json"), "w", encoding="utf-8") as f:
        json.dump(expressions, f, indent=1)
        f.write("\n")
    total = sum(os.path.getsize(os.path.join(out_dir, f)) for f in os.listdir(out_dir))
    print("make_goldens: %d cases (%d expressions), %d files, %d bytes in %s" % (len(w.cases), len(w.expression_cases), len(os.listdir(out_dir)), total, out_dir))


if __name__ == "__main__":
    main()
