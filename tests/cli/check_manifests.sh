#!/usr/bin/env bash
# The project's golden manifests (operators, expressions) and the ONNX conformance manifest through `dmlbits check`, on
# every CPU backend and every instruction set the host has, with JUnit output.
source "$(dirname "$0")/lib.sh"
golden="$TESTDATA/golden/manifest.json"
ncases() { "$PYTHON" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cases']))" "$1"; }

run_manifest() {  # MANIFEST ARGS...
  local manifest=$1; shift
  local want
  want=$(ncases "$manifest")
  expect_status 0 check "$manifest" --junit "$WORK/junit.xml" "$@"
  expect_out "$want passed, 0 failed"
  "$PYTHON" - "$WORK/junit.xml" "$want" <<'PY' || fail "JUnit XML for $manifest $*"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
assert len(cases) == int(sys.argv[2]), (len(cases), sys.argv[2])
assert root.get("failures") == "0" and root.get("errors") == "0"
PY
}

# Every backend `dmlbits devices` lists, and on CPU backends every instruction set it reports.
devices=$("$DMLBITS" devices --json) || fail "dmlbits devices --json failed"
combos=$("$PYTHON" -c "
import json, sys
for b in json.loads(sys.argv[1])['backends']:
    for isa in b.get('isas') or ['']:
        print(b['name'], isa)
" "$devices")
[ -n "$combos" ] || fail "no backends listed"
while read -r backend isa; do
  run_manifest "$golden" --backend "$backend" ${isa:+--isa "$isa"}
  # Expressions of the operators (issue #46), also made by scripts/make_goldens.py from NumPy.
  run_manifest "$TESTDATA/golden/expressions.json" --backend "$backend" ${isa:+--isa "$isa"}
done <<< "$combos"

# The ONNX conformance manifest as committed: its data is in the repository
# (testdata/conformance/onnx-node), so it runs from a fresh clone. Its cases must be what
# scripts/make_onnx_manifest.py makes of the data's manifest.
onnx="$TESTDATA/conformance/onnx-node.json"
"$PYTHON" "$DMLBITS_SOURCE_DIR/scripts/make_onnx_manifest.py" "$TESTDATA/conformance" "$WORK/onnx-node.json" >/dev/null ||
  fail "make_onnx_manifest.py failed"
"$PYTHON" -c "
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(a['cases'] != b['cases'] or b['root'] != 'onnx-node')" "$WORK/onnx-node.json" "$onnx" ||
  fail "testdata/conformance/onnx-node.json is stale: run scripts/make_onnx_manifest.py"
while read -r backend isa; do
  run_manifest "$onnx" --backend "$backend" ${isa:+--isa "$isa"}
done <<< "$combos"

# A failing manifest: a wrong golden fails with status 1 and a readable report; an
# expected-error case passes only with that error.
cd "$WORK"
"$PYTHON" -c "
import numpy as np
np.save('a.npy', np.array([[0,123],[456,789]], dtype=np.uint32))
np.save('good.npy', np.array([[0,6],[4,5]], dtype=np.uint8))
np.save('bad.npy', np.array([[0,6],[4,4]], dtype=np.uint8))
"
cat > m.json <<'JSON'
{"cases": [
 {"name": "good", "op": "popcount", "inputs": ["a.npy"], "expected": "good.npy"},
 {"name": "bad", "op": "popcount", "inputs": ["a.npy"], "expected": "bad.npy"},
 {"name": "refused", "op": "popcount", "inputs": ["a.npy"], "feature_level": "2_1", "expect_error": "invalid-input"},
 {"name": "not_refused", "op": "popcount", "inputs": ["a.npy"], "expect_error": "invalid-input"}
]}
JSON
expect_status 1 check m.json --junit j.xml
expect_out "2 passed, 2 failed"
expect_out "FAIL    bad: mismatch with"
expect_out "[1, 1]"
expect_out "0x04"
expect_out "FAIL    not_refused: expected error 'invalid-input', but the run succeeded"
grep -q '<failure' j.xml || fail "JUnit lacks failures"
# --update rewrites the wrong golden and says so; a second run passes.
cp bad.npy bad.orig.npy
expect_status 1 check m.json --update
expect_out "UPDATED bad"
expect_status 1 check m.json
expect_out "3 passed, 1 failed"
cmp -s bad.npy good.npy || fail "--update did not rewrite bad.npy with the result"
# Malformed manifests are input errors.
echo '{"cases": [{"name": "x", "op": "nope", "inputs": []}]}' > broken.json
expect_status 3 check broken.json
expect_err "unknown op"

# Expression cases (issue #46) as any case: pass, fail, --update, --junit, shards, -j.
# popcount(a ^ 0xffffffff) of [[0, 123], [456, 789]] in uint32: 32 - (0, 6, 4, 5) bits set.
"$PYTHON" -c "
import numpy as np
np.save('d.npy', np.array([[32, 26], [28, 27]], dtype=np.uint8))
np.save('d_wrong.npy', np.array([[32, 26], [28, 28]], dtype=np.uint8))
"
cat > e.json <<'JSON'
{"defaults": {"out_dtype": "uint8"},
 "cases": [
 {"name": "distance", "expression": "popcount(a ^ k)", "inputs": {"a": "a.npy", "k": "0xffffffff"}, "expected": "d.npy"},
 {"name": "distance_wrong", "expression": "popcount(~a)", "inputs": {"a": "a.npy"}, "expected": "d_wrong.npy"},
 {"name": "old_level", "expression": "popcount(a)", "inputs": {"a": "a.npy"}, "feature_level": "2_1",
  "expect_error": "invalid-input"}
]}
JSON
expect_status 1 check e.json --junit ej.xml -j 2
expect_out "2 passed, 1 failed"
expect_out "FAIL    distance_wrong: mismatch with"
grep -q 'name="distance_wrong"' ej.xml || fail "JUnit lacks the expression case"
expect_status 0 check e.json --shard 0/2
expect_out "2 passed, 0 failed"
expect_status 1 check e.json --shard 1/2
expect_out "0 passed, 1 failed"
expect_status 0 check e.json --update
expect_out "UPDATED distance_wrong"
cmp -s d_wrong.npy d.npy || fail "--update did not rewrite d_wrong.npy with the expression's result"
expect_status 0 check e.json
echo '{"cases": [{"name": "x", "op": "and", "expression": "a & b", "inputs": ["1", "2"], "expected": "g.npy"}]}' > both.json
expect_status 3 check both.json
expect_err "case 'x': give exactly one of \"op\""
finish
