#!/usr/bin/python3
"""JSON output of float tensors against NumPy.

For float16 (every one of the 65536 bit patterns), float32 and float64 (special values plus
random bit patterns, random subnormals and random ordinary values), saved as .npy by NumPy:

- `dmlbits xor f.npy 0 -o out.json` (xor with 0 is the identity) writes standard JSON (no NaN or
  Infinity literals) with the NumPy dtype name and shape;
- every finite value is a JSON number whose text NumPy parses (np.float16/32/64(text)) to exactly
  the original bits, -0.0 included, with no more significant digits than NumPy's own shortest
  repr (np.format_float_scientific(unique=True));
- every NaN and infinity is a "0x..." string holding exactly the original bits (payloads kept);
- with --hex every value is such a string;
- dmlbits reads its own JSON back to the original bits.

Expected bits are the arrays NumPy generated, never dmlbits output.
"""

import json
import os
import re
import sys

import numpy as np

import dmlbits_testlib as testlib

CHECKS = testlib.stderr_checks()
check = CHECKS.check


def run(*args):
    return testlib.run(*args, timeout=120)


UINT = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}
NAME = {np.float16: "float16", np.float32: "float32", np.float64: "float64"}


def no_constants(name):
    raise ValueError("non-standard JSON constant " + name)


def load_raw(path):
    """The JSON document with every number kept as its text."""
    with open(path) as f:
        return json.load(f, parse_float=lambda s: ("num", s), parse_int=lambda s: ("num", s),
                         parse_constant=no_constants)


def flatten(data, rank):
    if rank == 0:
        return [data]
    out = []
    for item in data:
        out.extend(flatten(item, rank - 1))
    return out


def significant_digits(text):
    mantissa = text.lower().partition("e")[0]
    digits = mantissa.replace("-", "").replace(".", "").strip("0")
    return max(len(digits), 1)


def sample(ftype, rng):
    """Special values, random bit patterns, random subnormals, random ordinary values."""
    u = UINT[ftype]
    bits = np.iinfo(u).bits
    fi = np.finfo(ftype)
    mant_bits = fi.nmant
    exp_mask = ((1 << (bits - 1 - mant_bits)) - 1) << mant_bits
    sign = 1 << (bits - 1)
    quiet = 1 << (mant_bits - 1)
    if ftype is np.float16:
        # Every pattern there is.
        return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    specials_bits = np.array([
        0, sign,                                   # +0.0, -0.0
        exp_mask, exp_mask | sign,                 # +inf, -inf
        exp_mask | quiet, exp_mask | quiet | sign,  # quiet NaNs
        exp_mask | 1, exp_mask | quiet | 0x5a5 | sign,  # signalling NaN, NaN with a payload
        (1 << mant_bits) - 1, ((1 << mant_bits) - 1) | sign,  # largest subnormals
        1, 1 | sign,                               # smallest subnormals
    ], dtype=u)
    specials = np.concatenate([
        specials_bits.view(ftype),
        np.array([fi.max, fi.min, fi.tiny, -fi.tiny, fi.eps, 1.0, -1.0, 0.1, 1.0 / 3, 2.0 / 3, 100.0,
                  1e-5, 123456.789, 2.0 ** 24, 2.0 ** 53 if ftype is np.float64 else 2.0 ** 25],
                 dtype=ftype),
    ])
    random_bits = rng.integers(0, np.iinfo(u).max, size=6000, dtype=u, endpoint=True)
    # Subnormals: exponent field 0, random mantissa and sign.
    subnormal_bits = (rng.integers(1, 1 << mant_bits, size=1000, dtype=u)
                      | (rng.integers(0, 2, size=1000, dtype=u) << u(bits - 1)))
    # NaNs with random payloads and signs.
    nan_bits = (rng.integers(1, 1 << mant_bits, size=200, dtype=u) | u(exp_mask)
                | (rng.integers(0, 2, size=200, dtype=u) << u(bits - 1)))
    ordinary = (rng.standard_normal(2000) * 10.0 ** rng.integers(-6, 7, size=2000)).astype(ftype)
    return np.concatenate([specials, random_bits.view(ftype), subnormal_bits.view(ftype), nan_bits.view(ftype),
                           ordinary])


def check_decimal(ftype, path, original, label):
    u = UINT[ftype]
    try:
        doc = load_raw(path)
    except ValueError as e:
        check(False, f"{label}: not standard JSON: {e}")
        return
    check(doc.get("dtype") == NAME[ftype], f"{label}: dtype {doc.get('dtype')!r}")
    shape = [int(d[1]) for d in doc.get("shape", [])]
    check(shape == list(original.shape), f"{label}: shape {shape} vs {list(original.shape)}")
    values = flatten(doc["data"], len(shape))
    flat = original.reshape(-1)
    if not check(len(values) == flat.size, f"{label}: {len(values)} values, expected {flat.size}"):
        return
    want_bits = flat.view(u)
    width = 2 * np.dtype(ftype).itemsize
    bad = []
    for i, (v, want, x) in enumerate(zip(values, want_bits, flat)):
        if np.isfinite(x):
            if not (isinstance(v, tuple) and v[0] == "num"):
                bad.append(f"[{i}] finite {x!r} written as {v!r}")
                continue
            text = v[1]
            got = np.array(ftype(text)).view(u)
            if got != want:
                bad.append(f"[{i}] {text} reads back as 0x{int(got):0{width}x}, wrote 0x{int(want):0{width}x}")
            elif not re.search(r"[.eE]", text):
                bad.append(f"[{i}] {text} does not look like a float")
            elif significant_digits(text) > significant_digits(np.format_float_scientific(x, unique=True)):
                bad.append(f"[{i}] {text} is longer than NumPy's {np.format_float_scientific(x, unique=True)}")
        else:
            expect = f"0x{int(want):0{width}x}"
            if v != expect:
                bad.append(f"[{i}] non-finite 0x{int(want):0{width}x} written as {v!r}, expected \"{expect}\"")
    check(not bad, f"{label}: {len(bad)} bad values, e.g. " + "; ".join(bad[:5]))


def check_hex(ftype, path, original, label):
    u = UINT[ftype]
    doc = load_raw(path)
    values = flatten(doc["data"], original.ndim)
    width = 2 * np.dtype(ftype).itemsize
    want = [f"0x{int(b):0{width}x}" for b in original.reshape(-1).view(u)]
    bad = [i for i, (v, w) in enumerate(zip(values, want)) if v != w]
    check(len(values) == len(want) and not bad,
          f"{label}: --hex values differ at {bad[:5]}" + (f": {values[bad[0]]!r} vs {want[bad[0]]}" if bad else ""))


def main():
    missing = testlib.dmlbits_missing("DMLBITS is not set to the dmlbits binary", status=2, stream=sys.stderr,
                                      need="exists")
    if missing is not None:
        return missing
    rng = np.random.default_rng(20261121)
    with testlib.temp_dir() as tmp:
        for ftype in (np.float16, np.float32, np.float64):
            name = NAME[ftype]
            values = sample(ftype, rng)
            rng.shuffle(values)
            n = values.size
            arrays = {
                "flat": values,
                "3d": values[:4096].reshape(2, 4, 512),  # layout; the flat array has them all
                "0d": np.array(values[7]),
                "negzero": np.array([-0.0, 0.0, -0.0], dtype=ftype),
            }
            for key, arr in arrays.items():
                label = f"{name} {key} {arr.shape}"
                src = os.path.join(tmp, f"{name}_{key}.npy")
                out = os.path.join(tmp, f"{name}_{key}.json")
                hexout = os.path.join(tmp, f"{name}_{key}_hex.json")
                back = os.path.join(tmp, f"{name}_{key}_back.npy")
                np.save(src, arr)
                r = run("xor", src, "0", "-o", out)
                if not check(r.returncode == 0, f"{label}: xor -o json exited {r.returncode}: {r.stderr}"):
                    continue
                check_decimal(ftype, out, arr, label)
                r = run("xor", src, "0", "--hex", "-o", hexout)
                if check(r.returncode == 0, f"{label}: --hex exited {r.returncode}: {r.stderr}"):
                    check_hex(ftype, hexout, arr, label + " --hex")
                for j in (out, hexout):
                    r = run("xor", j, "0", "-o", back)
                    if check(r.returncode == 0, f"{label}: reading {os.path.basename(j)} exited {r.returncode}: {r.stderr}"):
                        b = np.load(back)
                        u = UINT[ftype]
                        check(b.dtype == arr.dtype and b.shape == arr.shape
                              and np.array_equal(b.view(u), arr.view(u)),
                              f"{label}: {os.path.basename(j)} read back with different bits")
            # -0.0 is written with its sign.
            doc = load_raw(os.path.join(tmp, f"{name}_negzero.json"))
            check([v[1] for v in doc["data"]] == ["-0.0", "0.0", "-0.0"], f"{name}: -0.0 written as {doc['data']}")
    if CHECKS.failures:
        print(f"{len(CHECKS.failures)} of {CHECKS.count} checks failed", file=sys.stderr)
        return 1
    print(f"{CHECKS.count} checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
