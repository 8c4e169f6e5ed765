#!/usr/bin/python3
"""Whole-command differential test: dmlbits against NumPy over a covering design of factors.

Every case runs the built binary and compares every result it produces, bit for bit, with what
NumPy computes from the same inputs (expected values come from NumPy only, never from dmlbits).
The factors, and their values:

  op        every operator `dmlbits ops --json` lists (the program's operator table), with each
            output type (popcount: uint8, the default, and --out-dtype uint32) and for a shift
            each --shift-overflow mode (the default, directml, then zero and wrap); an operator
            without a NumPy model in MODELS fails the test before any case runs
  dtype     the 11 DirectML types, those the operator's newest tier takes (shifts: unsigned)
  size      0, 0-d, 1, SIMD widths (32 and 64 bytes) +-1, 4 unrolled AVX-512 vectors + 1,
            a 4 KiB page +-1, the 512 KiB stream chunk -1/+0/+1 (chunk elements = 512 KiB /
            max(input, output element size)), 3 chunks + 7, the CPU backend's 4 MiB
            multi-thread threshold -1/+0 (elements x the larger element size), 8 MiB + 67
            elements (non-temporal stores, in memory on one thread), and
            broadcasts: a scalar B over 3 chunks + 7, a scalar A, a row (1, c), a column
            (1, r, 1) over (3, r, c), an outer (r, 1) x (1, c), a row over the 4 MiB threshold
  a_layout  .npy v1 / v2 / v3 (little-endian, C order), big-endian, Fortran order (little- and
  b_layout  big-endian), |b1 bool (uint8 only), JSON object file, JSON nested-array file,
            literal (hex, decimal or binary integer for a 0-d operand, else an array literal
            with decimal or hexadecimal-string values), standard input as
            .npy, as big-endian Fortran-order .npy, as a JSON object; b_layout "none" for the
            unary ops. At most one operand is standard input.
  route     -o FILE.npy, -o - (parsed from the bytes), -o FILE.json, JSON on standard output
            with --hex, --in-place (on a copy of A), --expect GOLDEN (NumPy's result: exit 0;
            in a third of the cases also NumPy's result with one element flipped: exit 1),
            --repeat 2 --warmup 1 -o FILE, and `dmlbits check` of a manifest holding the case
            and a copy whose expected file has one element flipped (exit 1, ok and FAIL lines)
  backend   --backend cpu at every ISA `dmlbits devices --json` lists, with --threads 1 and 2;
            cpu-reference; d3d12 (when an adapter is listed); no --backend (auto)

Besides its route, every case runs the same operation through the other path: a case whose route
streams (-o FILE.npy, -o -, --in-place on an .npy A) also runs in memory (--repeat 2 -o FILE.npy)
and the two files must be identical byte for byte; a case whose route runs in memory (JSON,
--expect, --repeat, check) also runs streamed (-o FILE.npy). (Except for sizes of a few SIMD
vectors or a page, one chunk on either path: those meet both paths through the routes of the
cases they are in, and their twins would cost the sanitizer build a process start each.) Every
.npy output must be byte for byte what np.save writes for NumPy's result.

Data: deterministic random bits (np.random.default_rng from the seed and the operand), with edge
patterns (0, all ones, sign bit, 0x55.., 0xaa.., infinities, NaNs with payloads, 1.0) at both
ends; shift counts mostly below the width plus the width, width + 1, 2 x width, 31 to 33 and 63
to 67 (where directml's 32-bit lane wraps), 255, 2^32 - 1, 2^32 + 3 and the maximum. Element 0 is 0 and the last element is 0x0f0f.. (A), 0x5555.. (B) or a count of 1, and
scalars that broadcast are nonzero, so a chunk that repeats an earlier one changes the result
whichever operand and operator it hits. Inputs are generated once per (layout, dtype, shape, role)
in a temporary folder, each checked by NumPy (np.load / json) before use, and large ones are
deleted after their last use.

Not covered: a d3d12 run over its 256 MiB buffer limit (D3d12BackendOptions::max_buffer_bytes can
be lowered neither from the command line nor from the environment, and 256 MiB tensors cost too
much here), non-temporal stores with two threads (each thread's part would need 8 MiB, a 16 MiB
output) and for popcount to uint8 of wider types (8 MiB of output is 16-64 MiB of input).

The default run is a pairwise covering design: every pair of values of two factors that some
valid case can hold appears in at least one case. It is built greedily (AETG style) from a seed,
with invalid combinations (two standard inputs, --in-place with a literal A or with popcount or
with a result larger than A, unary ops with a B, shifts of signed types, bool with other types,
JSON or literal operands over their limits, check with standard input) rejected as the cases are
built; a pair no valid case can hold is not required. d3d12 and large sizes are preferred last
when several values cover the same new pairs, so they appear about as often as their pairs need.

Options and environment:
  DMLBITS_DIFF_SEED=N, --seed N   the design's seed (printed at the start)
  DMLBITS_DIFF_FULL=1, --full     every valid combination of the factors instead of the pairwise
                                  design: 8,516,088 cases with d3d12 and 3 ISAs (--full --count),
                                  weeks of CPU time, so split it with --shard
  --shard K/N                     run only cases with index % N == K (with --full, for splitting)
  --case I[,J...]                 run only these case indices of the design
  --keep DIR                      keep the inputs and outputs in DIR, so printed commands reproduce
  --count, --list                 print the number of cases / the cases, and run nothing
  -v, --verbose                   print every case with its time
  --jobs N, DMLBITS_DIFF_JOBS=N   cases run in parallel (default 2)
  DMLBITS_REQUIRE_D3D12=1         a missing d3d12 adapter is a failure rather than skipped
  e.g. DMLBITS=build/dmlbits /usr/bin/python3 tests/numpy/differential_test.py --full --shard 0/64

Each failure prints the case's factor values and the full command line that reproduces it.
Before the cases, self-checks make sure the comparison and every route's verification do report a
deliberately wrong expected result, and that the design covers every feasible pair.

Env from CTest: DMLBITS (the binary; the only one used). Exit 0 all passed, 1 any failure.
"""

import argparse
import concurrent.futures
import io
import itertools
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
import zlib

import numpy as np

import dmlbits_testlib as testlib

DMLBITS = testlib.DMLBITS
DEFAULT_SEED = 20261123
RUN_TIMEOUT = 300

# ---- Boundaries of the code (see lib/include/dmlbits/stream.hpp, cpu_backend.hpp) -----------
STREAM_CHUNK_BYTES = 512 << 10   # kStreamChunkBytes
PARALLEL_MIN_BYTES = 4 << 20     # CpuBackendOptions::parallel_min_bytes
NT_STORE_MIN_BYTES = 8 << 20     # KernelParams::stream_min_bytes
# Limits of this test's operands (dmlbits: JSON 64 MiB and 2^23 values; an argument 128 KiB).
JSON_IN_LIMIT = 200_000          # values in a JSON operand (over a chunk for 4- and 8-byte types)
JSON_OUT_LIMIT = 200_000         # values in a JSON result
LITERAL_CHARS = 100_000          # characters of an array literal

DTYPES = ["uint8", "int8", "uint16", "int16", "uint32", "int32", "uint64", "int64",
          "float16", "float32", "float64"]


class Op:
    """One value of the op factor: an operator of the program with its options (an output type,
    a shift mode) and the properties the design needs, from `dmlbits ops --json`."""

    def __init__(self, row, name, args=(), out_dtype=None, shift_mode=None, manifest=None, dtypes=()):
        self.name, self.verb, self.arity, self.args = name, row["verb"], row["arity"], list(args)
        # out_dtype: None when the output has the input's type. shift_mode: None for an operator
        # whose B is no shift count, else the --shift-overflow mode in force.
        self.out_dtype, self.shift, self.shift_mode = out_dtype, row["shift"], shift_mode
        self.in_place, self.gpu, self.dtypes = row["in_place"], row["gpu"], set(dtypes)
        self.manifest = manifest or {}


# The op factor's values, filled from the program by load_ops() before anything else runs.
OPS = {}


def short_dtype(dtype):
    return dtype.replace("uint", "u").replace("int", "i").replace("float", "f")


def load_ops():
    """OPS from `dmlbits ops --json`: the operators without a shift count first (each output type,
    the default without --out-dtype), then the shifts in each mode (the default mode without
    --shift-overflow). Returns the problems that stop the test: an operator or a shift mode with
    no NumPy model here, a data type this test does not know."""
    r = testlib.run("ops", "--json", timeout=120)
    if r.returncode != 0:
        return ["dmlbits ops --json failed (%d): %s" % (r.returncode, r.stderr.strip())]
    doc = json.loads(r.stdout)
    numpy = {d["name"]: d["numpy"] for d in doc["dtypes"]}
    problems = ["data type %s is not in this test's DTYPES: add it" % n for n in numpy.values() if n not in DTYPES]
    problems += ["operator '%s' has no NumPy model in tests/numpy/differential_test.py (MODELS): add one" % o["verb"]
                 for o in doc["ops"] if o["verb"] not in MODELS]
    modes = doc["shift_overflow_modes"]
    problems += ["--shift-overflow mode '%s' has no NumPy model in tests/numpy/differential_test.py "
                 "(shift_model): add it" % m for m in modes if m not in SHIFT_MODES_MODELLED]
    for row in [o for o in doc["ops"] if not o["shift"]]:
        dtypes = [numpy[t] for t in row["tiers"][-1]["input_types"]]
        if row["default_output_type"] is None:
            OPS[row["verb"]] = Op(row, row["verb"], dtypes=dtypes)
            continue
        default = numpy[row["default_output_type"]]
        OPS[row["verb"]] = Op(row, row["verb"], out_dtype=default, dtypes=dtypes)
        for out in [numpy[t] for t in row["tiers"][-1]["output_types"] if numpy[t] != default]:
            name = "%s-%s" % (row["verb"], short_dtype(out))
            OPS[name] = Op(row, name, ["--out-dtype", out], out, manifest={"out_dtype": out}, dtypes=dtypes)
    for mode in modes:
        for row in [o for o in doc["ops"] if o["shift"]]:
            dtypes = [numpy[t] for t in row["tiers"][-1]["input_types"]]
            if mode == modes[0]:
                OPS[row["verb"]] = Op(row, row["verb"], shift_mode=mode, dtypes=dtypes)
            else:
                name = "%s-%s" % (row["verb"], mode)
                OPS[name] = Op(row, name, ["--shift-overflow", mode], shift_mode=mode,
                               manifest={"shift_overflow": mode}, dtypes=dtypes)
    return problems

NPY_LAYOUTS = ["npy1", "npy2", "npy3", "be", "f-le", "f-be", "bool"]
JSON_FILE_LAYOUTS = ["json-obj", "json-nested"]
STDIN_LAYOUTS = ["stdin-npy", "stdin-f-be", "stdin-json"]
JSON_LAYOUTS = JSON_FILE_LAYOUTS + ["stdin-json"]
LAYOUTS = NPY_LAYOUTS + JSON_FILE_LAYOUTS + ["literal"] + STDIN_LAYOUTS

ROUTES = ["o-file", "o-stdout", "json-file", "json-stdout-hex", "in-place", "expect", "repeat", "check"]

FLAT_SIZES = ["0", "0d", "1", "v32-1", "v32", "v32+1", "v64-1", "v64+1", "u256+1", "page-1", "page+1",
              "chunk-1", "chunk", "chunk+1", "3chunk+7", "par-1", "par", "big"]
BROADCAST_SIZES = ["bscalar", "ascalar", "row", "col", "outer", "rowpar"]
SIZES = FLAT_SIZES + BROADCAST_SIZES
KERNEL_SIZES = {"v32-1", "v32", "v32+1", "v64-1", "v64+1", "u256+1", "page-1", "page+1"}
LARGE_SIZES = {"chunk-1", "chunk", "chunk+1", "3chunk+7", "par-1", "par", "big", "bscalar", "ascalar", "row",
               "col", "outer", "rowpar"}


def prod(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def flat_shape(n):
    """n elements as (n // p, p) for its smallest prime factor p < 100, else (n,)."""
    if n >= 4:
        for p in range(2, 100):
            if n % p == 0 and n // p > 1:
                return (n // p, p)
    return (n,)


def out_dtype_of(op, dtype):
    return OPS[op].out_dtype or dtype


def shapes(size, dtype, op):
    """(A's shape, B's shape or None) of a case."""
    w = np.dtype(dtype).itemsize
    wo = np.dtype(out_dtype_of(op, dtype)).itemsize
    wm = max(w, wo)
    chunk = STREAM_CHUNK_BYTES // wm
    par = PARALLEL_MIN_BYTES // wm
    flat = {"0": 0, "1": 1, "v32-1": 32 // w - 1, "v32": 32 // w, "v32+1": 32 // w + 1,
            "v64-1": 64 // w - 1, "v64+1": 64 // w + 1, "u256+1": 256 // w + 1,
            "page-1": 4096 // w - 1, "page+1": 4096 // w + 1, "chunk-1": chunk - 1, "chunk": chunk,
            "chunk+1": chunk + 1, "3chunk+7": 3 * chunk + 7, "par-1": par - 1, "par": par,
            "big": NT_STORE_MIN_BYTES // wm + 67}
    unary = OPS[op].arity == 1
    if size == "0d":
        a = b = ()
    elif size in flat:
        n = flat[size]
        a = b = (n,) if n < 2 else flat_shape(n)
    elif size == "bscalar":
        a, b = flat_shape(3 * chunk + 7), ()
    elif size == "ascalar":
        a, b = (), flat_shape(chunk + 1)
    elif size == "row":
        c = 1003
        a, b = (chunk // c + 2, c), (1, c)
    elif size == "col":
        c = 517
        r = chunk // (3 * c) + 2
        a, b = (3, r, c), (1, r, 1)
    elif size == "outer":
        c = 1029
        a, b = (chunk // c + 2, 1), (1, c)
    elif size == "rowpar":
        c = 4099
        a, b = (par // c + 1, c), (c,)
    else:
        raise ValueError(size)
    return a, (None if unary else b)


def out_shape(a, b):
    return a if b is None else tuple(np.broadcast_shapes(a, b))


def is_stdin(layout):
    return layout in STDIN_LAYOUTS


def literal_chars(dtype):
    return {1: 6, 2: 10, 4: 14, 8: 24}[np.dtype(dtype).itemsize]


# ---- Factors and constraints -------------------------------------------------------------------

def make_factors(backends):
    return [("op", list(OPS)), ("dtype", DTYPES), ("size", SIZES), ("a_layout", LAYOUTS),
            ("b_layout", LAYOUTS + ["none"]), ("route", ROUTES), ("backend", backends)]


_shape_cache = {}


def cached_shapes(size, dtype, op):
    key = (size, dtype, op)
    if key not in _shape_cache:
        _shape_cache[key] = shapes(size, dtype, op)
    return _shape_cache[key]


def valid(c):
    """False if the (possibly partial) case `c` cannot be completed into a valid one."""
    op, dt, size = c.get("op"), c.get("dtype"), c.get("size")
    A, B, route = c.get("a_layout"), c.get("b_layout"), c.get("route")
    if op is not None:
        o = OPS[op]
        if B is not None and (B == "none") != (o.arity == 1):
            return False
        if size is not None and o.arity == 1 and size in BROADCAST_SIZES:
            return False
        if dt is not None and dt not in o.dtypes:
            return False
        if route == "in-place" and not o.in_place:
            return False
        if c.get("backend") == "d3d12" and not o.gpu:
            return False
    if B == "none" and size in BROADCAST_SIZES:
        return False
    if dt is not None and dt != "uint8" and "bool" in (A, B):
        return False
    if A is not None and B is not None and is_stdin(A) and is_stdin(B):
        return False
    if route == "check" and (is_stdin(A) or is_stdin(B)):
        return False
    if route == "in-place":
        if A == "literal" or is_stdin(A):
            return False
        if size in ("ascalar", "outer"):
            return False
    if size is not None and dt is not None and op is not None:
        a, b = cached_shapes(size, dt, op)
        for layout, shp in ((A, a), (B, b)):
            if layout is None or shp is None:
                continue
            if layout in JSON_LAYOUTS and prod(shp) > JSON_IN_LIMIT:
                return False
            if layout == "literal" and shp != () and prod(shp) * literal_chars(dt) > LITERAL_CHARS:
                return False
        n_out = prod(out_shape(a, b))
        if route in ("json-file", "json-stdout-hex") and n_out > JSON_OUT_LIMIT:
            return False
        if route == "in-place" and A in JSON_FILE_LAYOUTS and n_out > JSON_OUT_LIMIT:
            return False
    return True


def value_cost(factor, value):
    """Tie-breaker when values cover equally many new pairs: slow values last."""
    if factor == "backend" and value == "d3d12":
        return 4
    if factor == "size":
        return {"big": 3, "par": 2, "par-1": 2, "rowpar": 2}.get(value, 1 if value in LARGE_SIZES else 0)
    return 0


def case_cost(c):
    """The tie-breaker for a (partial) case: its values' costs, and JSON text with a large tensor."""
    cost = sum(value_cost(f, v) for f, v in c.items())
    if c.get("size") in LARGE_SIZES and (c.get("route", "").startswith("json") or
                                         c.get("a_layout") in JSON_LAYOUTS or c.get("b_layout") in JSON_LAYOUTS):
        cost += 3
    return cost


# ---- The covering design -----------------------------------------------------------------------

class Design:
    def __init__(self, factors, seed):
        self.factors = factors
        self.names = [f for f, _ in factors]
        self.domains = [vals for _, vals in factors]
        self.rng = random.Random(seed)

    def as_case(self, idx_assign):
        return {self.names[f]: self.domains[f][v] for f, v in idx_assign.items()}

    def complete(self, fixed, order=None):
        """A valid full assignment extending `fixed` (factor index -> value index), or None."""
        order = order or [f for f in range(len(self.names)) if f not in fixed]
        assign = dict(fixed)
        if not valid(self.as_case(assign)):
            return None

        def dfs(k):
            if k == len(order):
                return True
            f = order[k]
            for v in range(len(self.domains[f])):
                assign[f] = v
                if valid(self.as_case(assign)) and dfs(k + 1):
                    return True
            del assign[f]
            return False

        return dict(assign) if dfs(0) else None

    def all_pairs(self):
        n = len(self.names)
        for i in range(n):
            for j in range(i + 1, n):
                for vi in range(len(self.domains[i])):
                    for vj in range(len(self.domains[j])):
                        yield (i, vi, j, vj)

    def feasible_pairs(self):
        feasible, infeasible, witness = [], [], {}
        for p in self.all_pairs():
            i, vi, j, vj = p
            w = self.complete({i: vi, j: vj})
            if w is None:
                infeasible.append(p)
            else:
                feasible.append(p)
                witness[p] = w
        return feasible, infeasible, witness

    @staticmethod
    def pairs_of(assign):
        fs = sorted(assign)
        return [(fs[a], assign[fs[a]], fs[b], assign[fs[b]]) for a in range(len(fs)) for b in range(a + 1, len(fs))]

    def cost(self, assign):
        return case_cost(self.as_case(assign))

    def pairwise(self, candidates=12):
        feasible, infeasible, witness = self.feasible_pairs()
        uncovered = set(feasible)
        cases = []
        n = len(self.names)
        while uncovered:
            # Start from a pair of the factor value with the most uncovered pairs (AETG).
            counts = {}
            for (i, vi, j, vj) in uncovered:
                counts[(i, vi)] = counts.get((i, vi), 0) + 1
                counts[(j, vj)] = counts.get((j, vj), 0) + 1
            top = max(sorted(counts), key=lambda k: counts[k])
            starts = sorted(p for p in uncovered if (p[0], p[1]) == top or (p[2], p[3]) == top)
            best, best_key = None, None
            for _ in range(candidates):
                i, vi, j, vj = self.rng.choice(starts)
                assign = {i: vi, j: vj}
                order = [f for f in range(n) if f not in assign]
                self.rng.shuffle(order)
                ok = True
                for f in order:
                    scored = []
                    for v in range(len(self.domains[f])):
                        assign[f] = v
                        if not valid(self.as_case(assign)):
                            continue
                        gain = sum(1 for g, gv in assign.items() if g != f and
                                   ((g, gv, f, v) if g < f else (f, v, g, gv)) in uncovered)
                        scored.append((gain, -case_cost(self.as_case(assign)), self.rng.random(), v))
                    del assign[f]
                    if not scored:
                        ok = False
                        break
                    assign[f] = max(scored)[3]
                if not ok or not valid(self.as_case(assign)):
                    continue
                gain = sum(1 for p in self.pairs_of(assign) if p in uncovered)
                key = (gain, -self.cost(assign))
                if best_key is None or key > best_key:
                    best, best_key = assign, key
            if best is None or best_key[0] == 0:
                best = witness[starts[0]]
            cases.append(self.as_case(best))
            uncovered.difference_update(self.pairs_of(best))
        return cases, feasible, infeasible

    def product(self):
        """Every valid full combination, in a fixed order (a generator)."""
        n = len(self.names)
        assign = {}

        def dfs(f):
            if f == n:
                yield self.as_case(assign)
                return
            for v in range(len(self.domains[f])):
                assign[f] = v
                if valid(self.as_case(assign)):
                    yield from dfs(f + 1)
            del assign[f]

        yield from dfs(0)

    def count_product(self):
        # The last factor (backend) takes part in no constraint: count the others and multiply.
        n = len(self.names) - 1
        assign = {}

        def dfs(f):
            if f == n:
                return 1
            total = 0
            for v in range(len(self.domains[f])):
                assign[f] = v
                if valid(self.as_case(assign)):
                    total += dfs(f + 1)
            del assign[f]
            return total

        return dfs(0) * len(self.domains[-1])


def covered_pairs(design, cases):
    """The pairs the cases hold, recounted from the case dicts (independent of pairwise())."""
    index = [{v: k for k, v in enumerate(d)} for d in design.domains]
    out = set()
    for c in cases:
        assign = {f: index[f][c[name]] for f, name in enumerate(design.names)}
        out.update(design.pairs_of(assign))
    return out


# ---- Data ----------------------------------------------------------------------------------------

def udtype(dtype):
    return np.dtype("<u%d" % np.dtype(dtype).itemsize)


def edge_patterns(dtype):
    dt = np.dtype(dtype)
    bits = dt.itemsize * 8
    top = 1 << (bits - 1)
    ones = (1 << bits) - 1
    p = [0, ones, 1, top, top - 1, ones // 3, (ones // 3) << 1, top | 1]
    if dt.kind == "f":
        exp_bits = {16: 5, 32: 8, 64: 11}[bits]
        mant = bits - 1 - exp_bits
        inf = ((1 << exp_bits) - 1) << mant
        p += [inf, inf | top, inf | (1 << (mant - 1)), inf | 1 | top, inf - 1,
              np.array(1.0, dtype=dt).view(udtype(dt)).item()]
    return p


def stable_seed(*parts):
    return zlib.crc32("/".join(map(str, parts)).encode())


_array_cache = {}
_array_lock = threading.Lock()


def logical_array(dtype, shape, role, is_bool, seed):
    """The operand's values (native little-endian, C order). role: "a", "b" or "count" (shifts)."""
    key = (dtype, shape, role, is_bool)
    with _array_lock:
        hit = _array_cache.get(key)
    if hit is not None:
        return hit
    dt = np.dtype(dtype)
    n = prod(shape)
    rng = np.random.default_rng([seed, stable_seed(dtype, shape, role, is_bool)])
    u = udtype(dt)
    bits = dt.itemsize * 8
    if role == "count":
        v = rng.integers(0, bits + 3, size=n, dtype=np.uint64)
        edges = [0, bits - 1, bits, bits + 1, 2 * bits, min(255, (1 << bits) - 1), (1 << bits) - 1, 1 << (bits - 1),
                 31, 32, 33, 63, 64, 67]
        if bits >= 32:
            edges += [2**32 - 1] + ([2**32 + 3] if bits == 64 else [])
        mask = rng.random(n) < 0.08
        v[mask] = rng.choice(np.array(edges, dtype=np.uint64), int(mask.sum()))
        v = v.astype(u)
    else:
        v = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8).view(u)
        edges = np.array(edge_patterns(dt), dtype=u)
    ones = (1 << bits) - 1
    if n == 1:
        # A scalar broadcast over a tensor is nonzero, has some bits of 0x55... and lacks others;
        # a scalar shift count is 1 to 3. So a wrong element of the other operand shows.
        if role == "count":
            v[0] = u.type(rng.integers(1, 4))
        else:
            v[0] = (v[0] & u.type((ones // 3) << 1)) | u.type(1)
    elif n > 1:
        k = min(n, len(edges))
        v[:k] = np.array(edges[:k], dtype=u)  # v[0] is 0
        if n > 2 * len(edges) + 1:
            v[n - 1 - len(edges):n - 1] = np.array(edges[::-1], dtype=u)
        # The last element differs from the first (0) so that every operator shows a chunk that
        # repeats the first one, even with one element past a chunk boundary, whichever operand
        # is wrong: A 0x0f0f..., B 0x5555... (each has bits the other lacks, and some in common),
        # a shift count of 1.
        v[n - 1] = {"a": u.type(ones // 17), "b": u.type(ones // 3), "count": u.type(1)}[role]
    if is_bool:
        v = v & u.type(1)
    arr = v.view(dt).reshape(shape)
    arr.setflags(write=False)
    with _array_lock:
        if len(_array_cache) > 24:
            _array_cache.clear()
        _array_cache[key] = arr
    return arr


# ---- Encodings -----------------------------------------------------------------------------------

def npy_encode(arr, version=1, big_endian=False, fortran=False, as_bool=False):
    """An .npy file written by hand (any version, byte order and order, which np.save cannot)."""
    dt = arr.dtype
    if as_bool:
        descr, data = "|b1", arr.astype(np.bool_)
    elif dt.itemsize == 1:
        descr, data = "|" + dt.kind + "1", arr
    else:
        order = ">" if big_endian else "<"
        descr = order + dt.kind + str(dt.itemsize)
        data = arr.astype(dt.newbyteorder(order))
    raw = data.tobytes(order="F" if fortran else "C")
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': %r, }" % (descr, fortran, tuple(arr.shape))
    prefix = 6 + 2 + (2 if version == 1 else 4)
    header += " " * ((-(prefix + len(header) + 1)) % 64) + "\n"
    hb = header.encode("utf-8" if version == 3 else "latin1")
    length = len(hb).to_bytes(2 if version == 1 else 4, "little")
    return b"\x93NUMPY" + bytes([version, 0]) + length + hb + raw


def npy_reference(arr):
    """What np.save writes for arr (dmlbits' .npy output must be these bytes)."""
    f = io.BytesIO()
    np.save(f, np.asarray(arr, order="C"), allow_pickle=False)
    return f.getvalue()


def nest_text(tokens, shape):
    if not shape:
        return tokens[0]
    if len(shape) == 1:
        return "[" + ",".join(tokens) + "]"
    step = prod(shape[1:])
    return "[" + ",".join(nest_text(tokens[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def json_tokens(arr, decimal_floats):
    dt = arr.dtype
    flat = np.asarray(arr, order="C").reshape(-1)
    if dt.kind in "ui":
        return list(map(str, flat.tolist()))
    bits = flat.view(udtype(dt)).tolist()
    width = 2 * dt.itemsize
    if not decimal_floats:
        return ['"0x%0*x"' % (width, b) for b in bits]
    with np.errstate(invalid="ignore"):
        values = flat.astype(np.float64).tolist()
    return [repr(v) if np.isfinite(v) else '"0x%0*x"' % (width, b) for v, b in zip(values, bits)]


def json_object_text(arr):
    return '{"dtype": "%s", "shape": %s, "data": %s}\n' % (
        arr.dtype.name, json.dumps(list(arr.shape)), nest_text(json_tokens(arr, False), arr.shape))


def scalar_literal(arr, variant):
    dt = arr.dtype
    b = arr.reshape(-1).view(udtype(dt))[0].item()
    if dt.kind in "ui" and variant % 3 == 1:
        return str(arr.reshape(-1)[0].item())  # decimal, negative for signed types
    if variant % 3 == 2:
        return "0b" + format(b, "b")
    return "0x%x" % b


# ---- Expected results (NumPy only) ---------------------------------------------------------------

_POPCOUNT8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint32)


def shift_model(o, ua, ub):
    """shl / shr in o.shift_mode on unsigned arrays of one width."""
    u = ua.dtype
    width = u.itemsize * 8
    cnt = ub.astype(np.uint64)

    def by(x, n):
        return (x << n) if o.verb == "shl" else (x >> n)
    if o.shift_mode == "wrap":
        return by(ua, (cnt % np.uint64(width)).astype(u))
    if o.shift_mode == "directml":
        # DirectML 1.15.4's measured rule (man page, --shift-overflow): up to 32 bits a 32-bit
        # lane shifted by count & 31 and cut to the width; 64 bits, c = count & 0xffffffff, a
        # shift by c if c < 32, else by 32 and then by c & 31.
        if width <= 32:
            lane = by(ua.astype(np.uint64), cnt & np.uint64(31)) & np.uint64(0xFFFFFFFF)
            return lane.astype(u)  # keeps the low `width` bits
        c = cnt & np.uint64(0xFFFFFFFF)
        big = c >= np.uint64(32)
        first = np.where(big, np.uint64(32), c)
        then = np.where(big, c & np.uint64(31), np.uint64(0))
        return by(by(ua, first), then)
    if o.shift_mode == "zero":
        s = np.minimum(cnt, np.uint64(width - 1)).astype(u)
        return np.where(cnt >= np.uint64(width), u.type(0), by(ua, s)).astype(u)
    raise ValueError(o.shift_mode)


SHIFT_MODES_MODELLED = {"directml", "zero", "wrap"}


def popcount_model(o, ua, ub):
    counts = _POPCOUNT8[ua.reshape(-1).view(np.uint8)].reshape(-1, ua.dtype.itemsize).sum(axis=-1)
    return counts.astype(o.out_dtype).reshape(ua.shape)


# The NumPy model of each operator, by verb: model(op, A, B) on the raw bits (unsigned arrays of
# the element width, broadcast together; B None for a unary operator) -> the result's bits, or
# for an operator with output types of its own the result in op.out_dtype. An operator the
# program lists without a model here fails the test (load_ops).
MODELS = {
    "and": lambda o, a, b: a & b,
    "or": lambda o, a, b: a | b,
    "xor": lambda o, a, b: a ^ b,
    "not": lambda o, a, b: ~a,
    "popcount": popcount_model,
    "shl": shift_model,
    "shr": shift_model,
}


def expected_result(op, a, b):
    """DirectML semantics on raw bits, computed with NumPy. a, b: logical arrays (b None if unary)."""
    o = OPS[op]
    dt = a.dtype
    u = udtype(dt)
    ua = np.asarray(a, order="C").view(u)
    ub = None
    if b is not None:
        ua, ub = np.broadcast_arrays(ua, np.asarray(b, order="C").view(u))
    r = MODELS[o.verb](o, ua, ub)
    # np.array: ~ of a 0-d array is a NumPy scalar.
    return np.array(r, order="C") if o.out_dtype else np.array(r, order="C").view(dt)


# ---- Comparison ----------------------------------------------------------------------------------

def compare_arrays(got, want):
    """None if got has want's dtype, shape and bits; else what differs."""
    if got.dtype.str != want.dtype.str and not (got.dtype.itemsize == 1 and got.dtype.name == want.dtype.name):
        return "dtype %s, expected %s" % (got.dtype.str, want.dtype.str)
    if got.shape != want.shape:
        return "shape %s, expected %s" % (got.shape, want.shape)
    u = udtype(want.dtype)
    gu = np.asarray(got, order="C").reshape(-1).view(u)
    wu = np.asarray(want, order="C").reshape(-1).view(u)
    bad = np.flatnonzero(gu != wu)
    if bad.size == 0:
        return None
    i = int(bad[0])
    return "%d of %d elements differ; first at flat index %d: got 0x%x, expected 0x%x%s" % (
        bad.size, wu.size, i, int(gu[i]), int(wu[i]),
        "; last at %d" % int(bad[-1]) if bad.size > 1 else "")


def flip_element(arr, index, bit):
    """A copy of arr with one bit of its flat element `index` flipped (checked to differ)."""
    u = udtype(arr.dtype)
    flat = np.array(arr, order="C").reshape(-1).view(u).copy()
    flat[index] ^= u.type(1 << bit)
    out = flat.view(arr.dtype).reshape(arr.shape)
    if compare_arrays(out, arr) is None:
        raise AssertionError("flip_element did not change element %d" % index)
    return out


def check_npy_bytes(got, want, ref):
    """None if `got` (bytes of an .npy dmlbits wrote) is np.save's file for `want`."""
    if got == ref:
        return None
    try:
        arr = np.load(io.BytesIO(got), allow_pickle=False)
    except Exception as e:  # noqa: BLE001 - any parse failure is the finding
        return "not an .npy NumPy can load (%s); %d bytes" % (e, len(got))
    why = compare_arrays(arr, want)
    return why or "same values, but the bytes differ from np.save's (header or padding)"


def flatten(data, ndim):
    if ndim == 0:
        return [data]
    for _ in range(ndim - 1):
        data = list(itertools.chain.from_iterable(data))
    return data


def json_to_array(doc, want):
    dt = want.dtype
    if doc.get("dtype") != dt.name:
        return None, "JSON dtype %r, expected %r" % (doc.get("dtype"), dt.name)
    if doc.get("shape") != list(want.shape):
        return None, "JSON shape %r, expected %r" % (doc.get("shape"), list(want.shape))
    values = flatten(doc["data"], want.ndim)
    if len(values) != want.size:
        return None, "JSON holds %d values, expected %d" % (len(values), want.size)
    u = udtype(dt)
    if all(isinstance(v, str) for v in values):
        return np.array([int(v, 16) for v in values], dtype=u).view(dt).reshape(want.shape), None
    if dt.kind in "ui":
        if not all(isinstance(v, int) for v in values):
            return None, "JSON integers expected"
        return np.array(values, dtype=dt).reshape(want.shape), None
    out = np.empty(len(values), dtype=u)
    for k, v in enumerate(values):
        if isinstance(v, str):
            out[k] = int(v, 16)
        else:
            out[k] = np.array(float(v)).astype(dt).view(u)
    return out.view(dt).reshape(want.shape), None


def check_json_text(text, want):
    try:
        doc = json.loads(text)
    except ValueError as e:
        return "not JSON (%s): %r" % (e, text[:200])
    arr, why = json_to_array(doc, want)
    return why or compare_arrays(arr, want)


# ---- Running cases -------------------------------------------------------------------------------

class Runner:
    def __init__(self, work, seed, isas, keep):
        self.work = work
        self.seed = seed
        self.isas = isas
        self.keep = keep
        self.cache = os.path.join(work, "inputs")
        os.makedirs(self.cache, exist_ok=True)
        self.file_locks = {}
        self.lock = threading.Lock()
        self.uses = {}
        self.runs = 0
        self.run_seconds = 0.0
        self.streamed_runs = 0
        self.memory_runs = 0
        env = dict(os.environ)
        for k in ("DMLBITS_ISA", "DMLBITS_THREADS"):
            env.pop(k, None)
        self.env = env

    # -- operand files
    def operand(self, layout, dtype, shape, role, variant):
        """(command-line operand, stdin file or None, manifest input, cache key, logical array)."""
        is_bool = layout == "bool"
        arr = logical_array(dtype, shape, role, is_bool, self.seed)
        logical = arr.astype(np.uint8) if is_bool else arr
        if layout == "literal":
            if shape == ():
                text = scalar_literal(arr, variant)
            else:
                text = nest_text(json_tokens(arr, variant % 2 == 1), shape)
            return text, None, text, None, logical
        key = (layout, dtype, shape, role)
        path = self.materialize(key, arr)
        if is_stdin(layout):
            return "-", path, None, key, logical
        return path, None, path, key, logical

    def materialize(self, key, arr):
        layout, dtype, shape, role = key
        ext = ".json" if layout in JSON_LAYOUTS else ".npy"
        name = "%s-%s-%s-%s%s" % (layout, dtype, "x".join(map(str, shape)) or "0d", role, ext)
        path = os.path.join(self.cache, name)
        with self.lock:
            lock = self.file_locks.setdefault(path, threading.Lock())
        with lock:
            if os.path.exists(path):
                return path
            if layout in ("npy1", "npy2", "npy3"):
                data = npy_encode(arr, version=int(layout[-1]))
            elif layout in ("be", "stdin-npy", "f-le", "f-be", "stdin-f-be", "bool"):
                data = npy_encode(arr, big_endian=layout in ("be", "f-be", "stdin-f-be"),
                                  fortran=layout.startswith(("f-", "stdin-f")), as_bool=layout == "bool",
                                  version=1)
            elif layout in ("json-obj", "stdin-json"):
                data = json_object_text(arr).encode()
            elif layout == "json-nested":
                data = (nest_text(json_tokens(arr, True), shape) + "\n").encode()
            else:
                raise ValueError(layout)
            self.verify_encoding(layout, data, arr)
            tmp = path + ".tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        return path

    @staticmethod
    def verify_encoding(layout, data, arr):
        """The file says what it should, as NumPy / Python's json read it (not dmlbits)."""
        if layout in JSON_LAYOUTS:
            doc = json.loads(data)
            if layout == "json-nested":
                doc = {"dtype": arr.dtype.name, "shape": list(arr.shape), "data": doc}
            got, why = json_to_array(doc, arr)
            why = why or compare_arrays(got, arr)
        else:
            got = np.load(io.BytesIO(data), allow_pickle=False)
            if layout == "bool":
                why = None if got.dtype == np.bool_ and np.array_equal(got, arr.astype(np.bool_)) else "bool differs"
            else:
                why = compare_arrays(got.astype(got.dtype.newbyteorder("<")), arr)
                if why is None and layout in ("be", "f-be", "stdin-f-be") and arr.dtype.itemsize > 1:
                    why = None if got.dtype.byteorder == ">" else "not big-endian"
                if why is None and layout in ("f-le", "f-be", "stdin-f-be"):
                    why = None if b"'fortran_order': True" in data[:200] else "not Fortran order"
        if why:
            raise AssertionError("test fixture %s is wrong: %s" % (layout, why))

    def release(self, keys):
        if self.keep:
            return
        for key in keys:
            if key is None:
                continue
            with self.lock:
                self.uses[key] = self.uses.get(key, 0) - 1
                done = self.uses[key] <= 0
            if done:
                layout, dtype, shape, role = key
                if prod(shape) * np.dtype(dtype).itemsize >= (1 << 20):
                    ext = ".json" if layout in JSON_LAYOUTS else ".npy"
                    name = "%s-%s-%s-%s%s" % (layout, dtype, "x".join(map(str, shape)) or "0d", role, ext)
                    try:
                        os.remove(os.path.join(self.cache, name))
                    except FileNotFoundError:
                        pass

    def acquire(self, case):
        with self.lock:
            for key in self.plan_keys(case):
                self.uses[key] = self.uses.get(key, 0) + 1

    def plan_keys(self, case):
        """Cache keys a case will use (for deleting large inputs after their last use)."""
        a_shape, b_shape = shapes(case["size"], case["dtype"], case["op"])
        keys = []
        if case["a_layout"] != "literal":
            keys.append((case["a_layout"], case["dtype"], a_shape, "a"))
        if b_shape is not None and case["b_layout"] != "literal":
            keys.append((case["b_layout"], case["dtype"], b_shape, "count" if OPS[case["op"]].shift else "b"))
        return keys

    # -- processes
    def run(self, cmd, stdin_path=None, env_extra=None):
        env = dict(self.env)
        env.update(env_extra or {})
        repro = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in (env_extra or {}).items())
        repro = (repro + " " if repro else "") + shlex.join(cmd)
        if stdin_path:
            repro += " < " + shlex.quote(stdin_path)
        t0 = time.monotonic()
        try:
            if stdin_path:
                with open(stdin_path, "rb") as f:
                    r = subprocess.run(cmd, stdin=f, capture_output=True, env=env, timeout=RUN_TIMEOUT)
            else:
                r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, env=env, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            r = subprocess.CompletedProcess(cmd, -999, b"", b"timed out after %d s" % RUN_TIMEOUT)
        with self.lock:
            self.runs += 1
            self.run_seconds += time.monotonic() - t0
        return r, repro

    def backend_args(self, backend):
        if backend == "default":
            return []
        if backend in ("cpu-reference", "d3d12"):
            return ["--backend", backend]
        _, isa, threads = backend.split(":")
        return ["--backend", "cpu", "--isa", isa, "--threads", threads]

    def run_case(self, idx, case, sabotage=False):
        """Runs one case; returns a list of failure messages (empty: passed)."""
        op, dtype, size = case["op"], case["dtype"], case["size"]
        A, B, route, backend = case["a_layout"], case["b_layout"], case["route"], case["backend"]
        o = OPS[op]
        cdir = os.path.join(self.work, "case%05d%s" % (idx, "-sabotage" if sabotage else ""))
        os.makedirs(cdir, exist_ok=True)
        failures = []
        label = "case %d [%s]" % (idx, ", ".join("%s=%s" % kv for kv in case.items()))

        def fail(what, repro, detail):
            failures.append("%s: %s: %s\n    reproduce: %s" % (label, what, detail, repro))

        a_shape, b_shape = shapes(size, dtype, op)
        variant = stable_seed(idx, self.seed)
        a_arg, a_stdin, a_man, a_key, a_val = self.operand(A, dtype, a_shape, "a", variant)
        operands, stdin_path, man_inputs, keys = [a_arg], a_stdin, [a_man], [a_key]
        b_val = None
        if b_shape is not None:
            b_arg, b_stdin, b_man, b_key, b_val = self.operand(B, dtype, b_shape, "count" if o.shift else "b",
                                                                variant >> 3)
            operands.append(b_arg)
            stdin_path = stdin_path or b_stdin
            man_inputs.append(b_man)
            keys.append(b_key)
        try:
            want = expected_result(op, a_val, b_val)
            if sabotage:
                if want.size:
                    want = flip_element(want, want.size // 2, 0)
                else:
                    want = want.reshape((1,) + want.shape)
            ref = npy_reference(want)
            need_dtype = all(lay in ("json-nested", "literal") for lay in ([A] if b_shape is None else [A, B]))
            dtype_args = ["--dtype", dtype] if need_dtype else []
            base = [DMLBITS, o.verb] + operands + o.args + dtype_args + self.backend_args(backend)

            def expect_ok(r, repro, what):
                if r.returncode != 0:
                    fail(what, repro, "exit %d, stderr: %s" % (r.returncode, r.stderr.decode(errors="replace").strip()))
                    return False
                if r.stderr:
                    fail(what, repro, "unexpected stderr: %s" % r.stderr.decode(errors="replace").strip())
                return True

            npy_results = {}  # path kind -> bytes, to compare streamed and in-memory outputs

            def npy_run(extra, kind, what):
                out = os.path.join(cdir, kind + ".npy")
                r, repro = self.run(base + extra + ["-o", out], stdin_path)
                with self.lock:
                    if kind == "streamed":
                        self.streamed_runs += 1
                    else:
                        self.memory_runs += 1
                if expect_ok(r, repro, what):
                    with open(out, "rb") as f:
                        got = f.read()
                    why = check_npy_bytes(got, want, ref)
                    if why:
                        fail(what, repro, why)
                    npy_results[kind] = (got, repro)

            primary_kind = None
            if route == "o-file":
                npy_run([], "streamed", "-o FILE.npy (streamed)")
                primary_kind = "streamed"
            elif route == "o-stdout":
                r, repro = self.run(base + ["-o", "-"], stdin_path)
                with self.lock:
                    self.streamed_runs += 1
                if expect_ok(r, repro, "-o - (streamed to standard output)"):
                    why = check_npy_bytes(r.stdout, want, ref)
                    if why:
                        fail("-o -", repro, why)
                    npy_results["streamed"] = (r.stdout, repro)
                primary_kind = "streamed"
            elif route == "json-file":
                out = os.path.join(cdir, "out.json")
                r, repro = self.run(base + ["-o", out], stdin_path)
                if expect_ok(r, repro, "-o FILE.json"):
                    with open(out, encoding="utf-8") as f:
                        why = check_json_text(f.read(), want)
                    if why:
                        fail("-o FILE.json", repro, why)
            elif route == "json-stdout-hex":
                r, repro = self.run(base + ["--hex"], stdin_path)
                if expect_ok(r, repro, "JSON --hex on standard output"):
                    why = check_json_text(r.stdout.decode("utf-8", errors="replace"), want)
                    if why:
                        fail("JSON --hex on standard output", repro, why)
            elif route == "in-place":
                target = os.path.join(cdir, "inplace" + os.path.splitext(a_arg)[1])
                shutil.copyfile(a_arg, target)
                cmd = list(base)
                cmd[2] = target
                r, repro = self.run(cmd + ["--in-place"], stdin_path)
                if A not in JSON_FILE_LAYOUTS:
                    with self.lock:
                        self.streamed_runs += 1
                if expect_ok(r, repro, "--in-place"):
                    with open(target, "rb") as f:
                        got = f.read()
                    if A in JSON_FILE_LAYOUTS:
                        why = check_json_text(got.decode("utf-8", errors="replace"), want)
                    else:
                        why = check_npy_bytes(got, want, ref)
                        npy_results["streamed"] = (got, repro)
                        primary_kind = "streamed"
                    if why:
                        fail("--in-place", repro, why)
            elif route == "expect":
                golden = os.path.join(cdir, "golden.npy")
                with open(golden, "wb") as f:
                    f.write(ref)
                r, repro = self.run(base + ["--expect", golden], stdin_path)
                if expect_ok(r, repro, "--expect NumPy's result"):
                    if r.stdout:
                        fail("--expect NumPy's result", repro, "prints on a match: %r" % r.stdout[:300])
                if want.size and (variant % 3 == 0 or sabotage):  # a third of the cases
                    flipped = flip_element(want, want.size // 3, 8 * want.dtype.itemsize - 1)
                    bad = os.path.join(cdir, "flipped.npy")
                    with open(bad, "wb") as f:
                        f.write(npy_reference(flipped))
                    r, repro = self.run(base + ["--expect", bad], stdin_path)
                    if r.returncode != 1:
                        fail("--expect with one element flipped", repro, "exit %d, expected 1; stderr: %s" % (
                            r.returncode, r.stderr.decode(errors="replace").strip()))
            elif route == "repeat":
                npy_run(["--repeat", "2", "--warmup", "1"], "memory", "--repeat 2 --warmup 1 -o FILE.npy (in memory)")
                primary_kind = "memory"
            elif route == "check":
                self.run_check(cdir, o, dtype, need_dtype, man_inputs, backend, want, ref, fail)
            else:
                raise ValueError(route)

            # The other path for the same operation: streamed and in memory, byte for byte. (Sizes
            # of a few SIMD vectors or pages, one chunk in either path, meet both paths through
            # the routes of other cases; sparing their twins keeps the sanitizer build in time.)
            twin = not sabotage and size not in KERNEL_SIZES
            if twin and primary_kind != "streamed":
                npy_run([], "streamed", "twin: -o FILE.npy (streamed)")
            if twin and primary_kind == "streamed":
                npy_run(["--repeat", "2"], "memory", "twin: --repeat 2 -o FILE.npy (in memory)")
            if "streamed" in npy_results and "memory" in npy_results:
                s, m = npy_results["streamed"], npy_results["memory"]
                if s[0] != m[0]:
                    fail("streamed and in-memory outputs differ", s[1] + "\n    versus:    " + m[1],
                         "%d and %d bytes" % (len(s[0]), len(m[0])))
        finally:
            self.release(keys)
            if not self.keep:
                shutil.rmtree(cdir, ignore_errors=True)
        return failures

    def run_check(self, cdir, o, dtype, need_dtype, man_inputs, backend, want, ref, fail):
        args, env = [DMLBITS, "check", "-j", "1"], {}
        case = {"name": "diff", "op": o.verb, "inputs": [], "expected": "expected.npy"}
        for x in man_inputs:
            case["inputs"].append(os.path.relpath(x, cdir) if os.path.isabs(x) else x)
        case.update(o.manifest)
        if need_dtype:
            case["dtype"] = dtype
        if backend in ("cpu-reference", "d3d12"):
            case["backend"] = backend
        elif backend != "default":
            _, isa, threads = backend.split(":")
            case["backend"] = "cpu"
            args += ["--isa", isa]
            env["DMLBITS_THREADS"] = threads
        with open(os.path.join(cdir, "expected.npy"), "wb") as f:
            f.write(ref)
        cases = [case]
        # A second case, the same with one element of its expected file flipped, must fail (in
        # the same process: a sanitizer build starts each process slowly).
        if want.size:
            with open(os.path.join(cdir, "flipped.npy"), "wb") as f:
                f.write(npy_reference(flip_element(want, (want.size * 2) // 3, 0)))
            cases.append(dict(case, name="diff-flipped", expected="flipped.npy"))
        manifest = os.path.join(cdir, "manifest.json")
        with open(manifest, "w", encoding="utf-8") as f:
            json.dump({"cases": cases}, f, indent=1)
        r, repro = self.run(args + [manifest], None, env)
        out = r.stdout.decode(errors="replace")
        status = 1 if len(cases) == 2 else 0
        summary = "1 passed, %d failed" % (len(cases) - 1)
        what = "check of a manifest with the case" + (" and its copy with one element flipped" if status else "")
        if r.returncode != status:
            fail(what, repro, "exit %d, expected %d; stdout: %s stderr: %s; manifest: %s" % (
                r.returncode, status, out.strip()[:2000], r.stderr.decode(errors="replace").strip(),
                json.dumps(cases)))
        elif not (re.search(r"^ok\s+diff$", out, re.M) and summary in out):
            fail(what, repro, "stdout lacks 'ok diff' / '%s': %s" % (summary, out.strip()[:2000]))
        elif status == 1 and not re.search(r"^FAIL\s+diff-flipped: ", out, re.M):
            fail(what, repro, "stdout lacks 'FAIL diff-flipped': %s" % out.strip()[:2000])


# ---- Self-checks -----------------------------------------------------------------------------------

def self_check_comparison():
    """The comparison functions detect a wrong element, shape, dtype and header."""
    problems = []
    want = expected_result("xor", logical_array("uint16", (37,), "a", False, 1),
                           logical_array("uint16", (37,), "b", False, 1))
    if compare_arrays(want.copy(), want) is not None:
        problems.append("compare_arrays reports equal arrays as different")
    for k in (0, 17, 36):
        bad = want.copy()
        bad.view(np.uint16)[k] ^= 0x8000
        if compare_arrays(bad, want) is None:
            problems.append("compare_arrays misses a flipped element at %d" % k)
        if check_npy_bytes(npy_reference(bad), want, npy_reference(want)) is None:
            problems.append("check_npy_bytes misses a flipped element at %d" % k)
        doc = {"dtype": "uint16", "shape": [37], "data": bad.tolist()}
        if check_json_text(json.dumps(doc), want) is None:
            problems.append("check_json_text misses a flipped element at %d" % k)
    if compare_arrays(want.reshape(1, 37), want) is None:
        problems.append("compare_arrays misses a shape difference")
    if compare_arrays(want.view(np.int16), want) is None:
        problems.append("compare_arrays misses a dtype difference")
    if check_npy_bytes(npy_encode(want, version=2), want, npy_reference(want)) is None:
        problems.append("check_npy_bytes misses a header that is not np.save's")
    f = np.array([1.5, -0.0, np.nan], dtype=np.float32)
    if compare_arrays(np.array([1.5, 0.0, np.nan], dtype=np.float32), f) is None:
        problems.append("compare_arrays misses -0.0 versus 0.0")
    # The NumPy semantics themselves, on hand-computed values (man page, SEMANTICS).
    u8 = np.array([1], dtype=np.uint8)
    checks = [
        (expected_result("shl-zero", u8, np.array([9], np.uint8))[0] == 0, "shl u8 1<<9 is 0 in zero mode"),
        (expected_result("shl", u8, np.array([9], np.uint8))[0] == 0, "shl u8 1<<9 is 0 by default (directml)"),
        (expected_result("shl-wrap", u8, np.array([9], np.uint8))[0] == 2, "shl u8 1<<9 wraps to 2"),
        # The values DirectML 1.15.4 was measured to give, typed in (directml-under-wine.md).
        (list(expected_result("shl", np.array([0xF4, 0xF5, 0xF7], np.uint8), np.array([32, 35, 41], np.uint8)))
         == [0xF4, 0xA8, 0x00], "directml shl u8 by 32, 35, 41"),
        (expected_result("shl", np.array([0xF3F3], np.uint16), np.array([33], np.uint16))[0] == 0xE7E6,
         "directml shl u16 0xf3f3 by 33"),
        (expected_result("shr", np.array([0xD69A5E00F2F2F2F2], np.uint64), np.array([64], np.uint64))[0]
         == 0xD69A5E00, "directml shr u64 by 64 shifts by 32"),
        (expected_result("shl", np.array([1], np.uint64), np.array([2**32 - 1], np.uint64))[0] == 2**63,
         "directml shl u64 by 2^32-1 shifts by 63"),
        (expected_result("shr", np.array([2**63], np.uint64), np.array([2**64 - 1], np.uint64))[0] == 1,
         "directml shr u64 by 2^64-1 shifts by 63"),
        (expected_result("shr", np.array([0x80], np.uint8), np.array([7], np.uint8))[0] == 1, "shr u8"),
        (expected_result("popcount", np.array([-1], np.int8), None)[0] == 8, "popcount int8 -1 is 8"),
        (expected_result("popcount-u32", np.array([1.0], np.float32), None)[0] == 7, "popcount f32 1.0 is 7"),
        (expected_result("not", np.array([0.0], np.float32), None).view(np.uint32)[0] == 0xFFFFFFFF,
         "not f32 0.0 is 0xffffffff"),
        (expected_result("shr-wrap", np.array([2**63], np.uint64), np.array([2**64 - 1], np.uint64))[0] == 1,
         "shr u64 by 2^64-1 wraps to 63"),
    ]
    problems += ["NumPy semantics wrong: " + what for ok, what in checks if not ok]
    # Results are arrays, 0-d included (a NumPy scalar would not take the flips the checks make).
    for op in OPS:
        a = np.array(3, dtype=np.uint16)
        r = expected_result(op, a, None if OPS[op].arity == 1 else np.array(1, dtype=np.uint16))
        if not isinstance(r, np.ndarray) or r.shape != () or not r.flags.writeable:
            problems.append("expected_result(%s) of 0-d operands is not a writeable 0-d array: %r" % (op, r))
    return problems


def self_check_routes(runner, backends):
    """Every route's verification reports a deliberately wrong expected result. (That they pass
    the right one is what the design's cases show.)"""
    problems = []
    for k, route in enumerate(ROUTES):
        case = {"op": "xor", "dtype": "uint16", "size": "v32+1", "a_layout": "npy1",
                "b_layout": "literal" if route != "json-stdout-hex" else "npy3", "route": route,
                "backend": backends[k % len(backends)]}
        if not runner.run_case(-1 - k, case, sabotage=True):
            problems.append("a wrong expected result went unnoticed on route %s: %s" % (route, case))
    return problems


# ---- Main ------------------------------------------------------------------------------------------

def discover_backends():
    r = testlib.run("devices", "--json", timeout=120)
    if r.returncode != 0:
        raise SystemExit("dmlbits devices --json failed (%d): %s" % (r.returncode, r.stderr))
    dev = json.loads(r.stdout)
    isas = []
    for b in dev["backends"]:
        if b["name"] == "cpu":
            isas = b["isas"]
    backends = ["cpu:%s:%d" % (isa, t) for isa in isas for t in (1, 2)] + ["cpu-reference"]
    d3d = dev.get("d3d12", {})
    note = None
    if d3d.get("available") and d3d.get("adapters"):
        backends.append("d3d12")
    else:
        note = d3d.get("reason", "no adapter")
    backends.append("default")
    return backends, isas, note


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true", default=os.environ.get("DMLBITS_DIFF_FULL") == "1")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("DMLBITS_DIFF_SEED") or DEFAULT_SEED))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("DMLBITS_DIFF_JOBS") or 2))
    ap.add_argument("--shard", default=None)
    ap.add_argument("--case", default=None)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--count", action="store_true")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    missing = testlib.dmlbits_missing("differential_test: DMLBITS is not set to an executable", stream=sys.stderr,
                                      need="executable")
    if missing is not None:
        return missing
    started = time.monotonic()
    problems = load_ops()
    if problems:
        for p in problems:
            print("FAIL: " + p)
        return 1
    backends, isas, d3d12_missing = discover_backends()
    if d3d12_missing is not None:
        if os.environ.get("DMLBITS_REQUIRE_D3D12") == "1":
            print("FAIL: DMLBITS_REQUIRE_D3D12=1 but the d3d12 backend is unavailable: %s" % d3d12_missing)
            return 1
        print("differential_test: d3d12 backend unavailable (%s): its cases are skipped" % d3d12_missing)

    design = Design(make_factors(backends), args.seed)
    if args.full:
        if args.count:
            print("full product: %d cases" % design.count_product())
            return 0
        cases = design.product()
        print("differential_test: seed %d, FULL product of the factors (%s)" % (
            args.seed, ", ".join("%s %d" % (f, len(v)) for f, v in design.factors)))
    else:
        cases, feasible, infeasible = design.pairwise()
        # Independent recount: every feasible pair is held by some case, and every case is valid.
        missing = set(feasible) - covered_pairs(design, cases)
        invalid = [c for c in cases if not valid(c)]
        print("differential_test: seed %d, %d cases cover all %d feasible pairs of %s "
              "(%d pairs no valid case can hold)" % (
                  args.seed, len(cases), len(feasible),
                  ", ".join("%s(%d)" % (f, len(v)) for f, v in design.factors), len(infeasible)))
        if missing or invalid or len(feasible) < 1000:
            print("FAIL: the design is broken: %d feasible pairs uncovered, %d invalid cases, %d feasible pairs" % (
                len(missing), len(invalid), len(feasible)))
            return 1
        if args.count:
            return 0
    if args.list:
        for i, c in enumerate(cases):
            print(i, json.dumps(c))
        return 0

    selected = None
    if args.case:
        selected = {int(x) for x in args.case.split(",")}
    shard = None
    if args.shard:
        k, n = args.shard.split("/")
        shard = (int(k), int(n))

    def chosen():
        for i, c in enumerate(cases):
            if selected is not None and i not in selected:
                continue
            if shard is not None and i % shard[1] != shard[0]:
                continue
            yield i, c

    tmp = None
    if args.keep:
        work = os.path.abspath(args.keep)
        os.makedirs(work, exist_ok=True)
    else:
        tmp = testlib.temp_dir(prefix="dmlbits-diff-")
        work = tmp.name
    failures = []
    out_lock = threading.Lock()
    try:
        runner = Runner(work, args.seed, isas, bool(args.keep))
        problems = self_check_comparison()
        problems += self_check_routes(runner, backends)
        for p in problems:
            print("FAIL (self-check): " + p)
        failures += problems

        # Large inputs are deleted after their last use: in the pairwise design the uses are
        # counted ahead; the full product is enumerated lazily, so there they count cases in flight.
        if not args.full:
            for _, c in chosen():
                runner.acquire(c)
        done = 0
        n_failed_cases = 0

        durations = []

        def one(item):
            i, c = item
            t0 = time.monotonic()
            if args.full:
                runner.acquire(c)
            try:
                errs = runner.run_case(i, c)
            except Exception as e:  # noqa: BLE001 - a crash of the harness is reported as a failure
                errs = ["case %d %s: the test harness raised %r" % (i, json.dumps(c), e)]
            durations.append((time.monotonic() - t0, i))
            if args.verbose:
                with out_lock:
                    print("case %d: %.2f s %s%s" % (i, durations[-1][0], json.dumps(c), " FAILED" if errs else ""),
                          flush=True)
            return i, c, errs

        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            pending = set()
            it = chosen()
            while True:
                while len(pending) < 4 * max(1, args.jobs):
                    item = next(it, None)
                    if item is None:
                        break
                    pending.add(pool.submit(one, item))
                if not pending:
                    break
                finished, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in finished:
                    i, c, errs = fut.result()
                    done += 1
                    if errs:
                        n_failed_cases += 1
                        failures += errs
                        with out_lock:
                            for e in errs:
                                print("FAIL: " + e, flush=True)
        wall = time.monotonic() - started
        print("differential_test: %d cases, %d dmlbits runs (%d streamed, %d in memory; %.1f s in dmlbits), "
              "%d failed cases, %d failures, %.1f s (seed %d%s)" % (
                  done, runner.runs, runner.streamed_runs, runner.memory_runs, runner.run_seconds, n_failed_cases,
                  len(failures), wall, args.seed, ", full product" if args.full else ", pairwise"))
        slowest = sorted(durations, reverse=True)[:5]
        if slowest:
            print("slowest cases: " + ", ".join("%d (%.1f s)" % (i, t) for t, i in slowest))
        if failures:
            print("reproduce one case: DMLBITS=%s DMLBITS_DIFF_SEED=%d %s %s%s --case N --keep DIR" % (
                DMLBITS, args.seed, sys.executable, os.path.abspath(__file__), " --full" if args.full else ""))
        if not args.full and selected is None and shard is None and done < 200:
            print("FAIL: only %d cases ran" % done)
            return 1
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
