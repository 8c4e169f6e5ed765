#!/usr/bin/python3
"""Runs every case of testdata/golden/manifest.json through dmlbits and compares the result with
the expected .npy that scripts/make_goldens.py computed with NumPy: same dtype, same shape, same
bytes. Also checks that the checked-in goldens are what the generator writes today (a stale or
hand-edited golden would otherwise go unnoticed), and that the manifest covers every operator
`dmlbits ops --json` lists with every data type its newest tier takes (an operator the generator
has no NumPy model for stops make_goldens.py, which fails this test).

Env: DMLBITS (the binary), DMLBITS_SOURCE_DIR. Exit 0 all passed, 1 any failure.
"""

import json
import os
import subprocess
import sys

import numpy as np

import dmlbits_testlib as testlib

SOURCE_DIR = testlib.SOURCE_DIR
DMLBITS = testlib.DMLBITS
GOLDEN_DIR = testlib.testdata("golden")
# The generator writes well over this many; fewer means the manifest lost cases.
MIN_CASES = 100

CHECKS = testlib.Checks()
fail = CHECKS.fail
failures = CHECKS.failures


def describe(arr):
    return "%s%s" % (arr.dtype.str, arr.shape)


def same_array(got, want):
    """(ok, why): dtype (with byte order), shape and raw bytes all equal."""
    if got.dtype.str != want.dtype.str:
        return False, "dtype %s, expected %s" % (got.dtype.str, want.dtype.str)
    if got.shape != want.shape:
        return False, "shape %s, expected %s" % (got.shape, want.shape)
    gb, wb = np.ascontiguousarray(got).tobytes(), np.ascontiguousarray(want).tobytes()
    if gb != wb:
        gu = np.frombuffer(gb, dtype="u%d" % want.dtype.itemsize)
        wu = np.frombuffer(wb, dtype="u%d" % want.dtype.itemsize)
        bad = np.flatnonzero(gu != wu)
        i = int(bad[0])
        return False, "%d of %d elements differ; first at flat index %d: got 0x%x, expected 0x%x" % (
            bad.size, wu.size, i, int(gu[i]), int(wu[i]))
    return True, ""


def check_goldens_are_current(manifest):
    """Regenerates into a temporary directory and compares the arrays and the manifest."""
    script = os.path.join(SOURCE_DIR, "scripts", "make_goldens.py")
    with testlib.temp_dir() as tmp:
        r = subprocess.run([sys.executable, script, "--out", tmp], capture_output=True, text=True)
        if r.returncode != 0:
            fail("make_goldens.py failed (%d): %s" % (r.returncode, r.stderr.strip()))
            return
        with open(os.path.join(tmp, "manifest.json"), encoding="utf-8") as f:
            fresh = json.load(f)
        if fresh != manifest:
            fail("testdata/golden/manifest.json differs from what scripts/make_goldens.py writes; rerun it")
        with open(os.path.join(tmp, "expressions.json"), encoding="utf-8") as f:
            fresh_expressions = json.load(f)
        if fresh_expressions != load_expressions():
            fail("testdata/golden/expressions.json differs from what scripts/make_goldens.py writes; rerun it")
        names = sorted(f for f in os.listdir(tmp) if f.endswith(".npy"))
        have = sorted(f for f in os.listdir(GOLDEN_DIR) if f.endswith(".npy"))
        if names != have:
            fail("testdata/golden/*.npy files differ from the generator's: extra %s, missing %s" % (
                sorted(set(have) - set(names)), sorted(set(names) - set(have))))
        for n in set(names) & set(have):
            ok, why = same_array(np.load(os.path.join(GOLDEN_DIR, n)), np.load(os.path.join(tmp, n)))
            if not ok:
                fail("testdata/golden/%s is stale (%s); rerun scripts/make_goldens.py" % (n, why))


def check_coverage(program, cases):
    """Every operator the program lists has a case with each input data type of its newest tier."""
    numpy = {d["name"]: d["numpy"] for d in program["dtypes"]}
    have = set()
    for c in cases:
        if c["inputs"][0].endswith(".npy"):
            a = np.load(os.path.join(GOLDEN_DIR, c["inputs"][0]), allow_pickle=False)
            have.add((c["op"], a.dtype.name))
    for o in program["ops"]:
        for t in o["tiers"][-1]["input_types"]:
            if (o["verb"], numpy[t]) not in have:
                fail("no golden case for operator '%s' with %s: rerun scripts/make_goldens.py (is its NumPy model "
                     "in MODELS?)" % (o["verb"], numpy[t]))


def run_case(case, tmp):
    name = case["name"]
    inputs = [os.path.join(GOLDEN_DIR, x) if x.endswith(".npy") else x for x in case["inputs"]]
    out = os.path.join(tmp, name + ".out.npy")
    args = []
    for key, flag in (("out_dtype", "--out-dtype"), ("shift_overflow", "--shift-overflow"),
                      ("feature_level", "--feature-level")):
        if key in case:
            args += [flag, case[key]]
    cmd = [DMLBITS, case["op"], *inputs, *args, "-o", out]
    r = testlib.run(*cmd[1:])
    if r.returncode != 0:
        fail("%s: exit %d: %s" % (name, r.returncode, r.stderr.strip()))
        return
    if r.stderr:
        fail("%s: unexpected stderr: %s" % (name, r.stderr.strip()))
    if not os.path.exists(out):
        fail("%s: no output file" % name)
        return
    got = np.load(out, allow_pickle=False)
    want = np.load(os.path.join(GOLDEN_DIR, case["expected"]), allow_pickle=False)
    ok, why = same_array(got, want)
    if not ok:
        fail("%s: %s (command: %s)" % (name, why, " ".join(cmd[1:])))


def load_expressions():
    with open(os.path.join(GOLDEN_DIR, "expressions.json"), encoding="utf-8") as f:
        return json.load(f)


def run_expression_case(case, tmp):
    """An expressions.json case through `dmlbits eval EXPRESSION NAME=INPUT...`."""
    name = case["name"]
    bindings = []
    for key, x in case["inputs"].items():
        x = json.dumps(x) if isinstance(x, list) else x
        bindings.append("%s=%s" % (key, os.path.join(GOLDEN_DIR, x) if x.endswith(".npy") else x))
    out = os.path.join(tmp, name + ".out.npy")
    args = ["--out-dtype", case["out_dtype"]] if "out_dtype" in case else []
    cmd = [DMLBITS, "eval", case["expression"], *bindings, *args, "-o", out]
    r = testlib.run(*cmd[1:])
    if r.returncode != 0:
        fail("%s: exit %d: %s" % (name, r.returncode, r.stderr.strip()))
        return
    got = np.load(out, allow_pickle=False)
    want = np.load(os.path.join(GOLDEN_DIR, case["expected"]), allow_pickle=False)
    ok, why = same_array(got, want)
    if not ok:
        fail("%s: %s (command: %s)" % (name, why, " ".join(cmd[1:])))


def main():
    missing = testlib.dmlbits_missing("golden_test: set DMLBITS to the dmlbits binary")
    if missing is not None:
        return missing
    with open(os.path.join(GOLDEN_DIR, "manifest.json"), encoding="utf-8") as f:
        manifest = json.load(f)
    cases = manifest["cases"]
    if len(cases) < MIN_CASES:
        fail("the manifest has only %d cases (expected at least %d)" % (len(cases), MIN_CASES))
    check_coverage(testlib.program_ops(), cases)

    check_goldens_are_current(manifest)
    with testlib.temp_dir() as tmp:
        for case in cases:
            run_case(case, tmp)
        for case in load_expressions()["cases"]:
            run_expression_case(case, tmp)

    print("golden_test: %d cases run, %d failures" % (len(cases), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
