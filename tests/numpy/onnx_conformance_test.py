#!/usr/bin/python3
"""The ONNX backend node tests for BitwiseAnd/Or/Xor/Not and BitShift (ONNX's data, committed
in testdata/conformance/onnx-node with its license and notice): each case runs at its lowest
feature level and must reproduce expected.npy (dtype, shape, bytes). A case whose data type
needs 4_1 is also run at 4_0, where dmlbits must refuse it (exit 3, a message naming the level
it needs) and write nothing.

Env: DMLBITS, DMLBITS_CONFORMANCE_DIR (testdata/conformance when not set). Fails if the data is absent.
"""

import json
import os
import sys

import numpy as np

import dmlbits_testlib as testlib

DMLBITS = testlib.DMLBITS
ONNX_DIR = os.path.join(testlib.CONFORMANCE_DIR or testlib.testdata("conformance"), "onnx-node")
EXPECTED_CASES = 23  # README: "23 cases"
REFUSAL = "needs DML_FEATURE_LEVEL_4_1 or later (requested 4_0)"
EXIT_INVALID_INPUT = 3

CHECKS = testlib.Checks()
fail = CHECKS.fail
failures = CHECKS.failures


def compare(name, got, want):
    if got.dtype.str != want.dtype.str:
        fail("%s: dtype %s, expected %s" % (name, got.dtype.str, want.dtype.str))
    elif got.shape != want.shape:
        fail("%s: shape %s, expected %s" % (name, got.shape, want.shape))
    elif np.ascontiguousarray(got).tobytes() != np.ascontiguousarray(want).tobytes():
        fail("%s: values differ: got %s, expected %s" % (name, got.tolist(), want.tolist()))


def main():
    if not os.path.isfile(os.path.join(ONNX_DIR, "manifest.json")):
        print("onnx_conformance_test: no conformance data at %r" % ONNX_DIR, file=sys.stderr)
        return 1
    missing = testlib.dmlbits_missing("onnx_conformance_test: set DMLBITS to the dmlbits binary")
    if missing is not None:
        return missing
    with open(os.path.join(ONNX_DIR, "manifest.json"), encoding="utf-8") as f:
        cases = json.load(f)["cases"]
    if len(cases) != EXPECTED_CASES:
        fail("manifest lists %d cases, expected %d" % (len(cases), EXPECTED_CASES))

    refusals = 0
    with testlib.temp_dir() as tmp:
        for case in cases:
            name = case["name"]
            case_dir = os.path.join(ONNX_DIR, name)
            inputs = [os.path.join(case_dir, x) for x in case["inputs"]]
            level = case["min_feature_level"]
            out = os.path.join(tmp, name + ".npy")
            cmd = [DMLBITS, case["op"], *inputs, "--feature-level", level, "-o", out]
            r = testlib.run(*cmd[1:])
            if r.returncode != 0:
                fail("%s at %s: exit %d: %s" % (name, level, r.returncode, r.stderr.strip()))
            else:
                compare("%s at %s" % (name, level), np.load(out, allow_pickle=False),
                        np.load(os.path.join(case_dir, case["expected"]), allow_pickle=False))

            if level == "4_1":
                refusals += 1
                out40 = os.path.join(tmp, name + ".4_0.npy")
                cmd = [DMLBITS, case["op"], *inputs, "--feature-level", "4_0", "-o", out40]
                r = testlib.run(*cmd[1:])
                if r.returncode != EXIT_INVALID_INPUT:
                    fail("%s at 4_0: exit %d, expected %d; stderr: %s" % (
                        name, r.returncode, EXIT_INVALID_INPUT, r.stderr.strip()))
                if REFUSAL not in r.stderr:
                    fail("%s at 4_0: stderr lacks %r: %s" % (name, REFUSAL, r.stderr.strip()))
                if not r.stderr.startswith("dmlbits: " + case["op"] + ": ") or r.stderr.count("\n") != 1:
                    fail("%s at 4_0: not one 'dmlbits: %s: ' line: %r" % (name, case["op"], r.stderr))
                if os.path.exists(out40):
                    fail("%s at 4_0: an output file was written despite the refusal" % name)

    # The data has signed and 64-bit cases; if none needed 4_1 the refusal check never ran.
    if refusals == 0:
        fail("no case has min_feature_level 4_1; the refusal check did not run")
    print("onnx_conformance_test: %d cases run, %d also run at 4_0 (must be refused), %d failures"
          % (len(cases), refusals, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
