#!/usr/bin/env bash
# --expect: comparing a result with a golden file, and --update (re)writing it. Expected
# values come from DirectML's documented BIT_COUNT example: [[0,123],[456,789]] -> [[0,6],[4,5]].
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"
"$P" -c "
import numpy as np
np.save('pc.npy', np.array([[0,123],[456,789]], dtype=np.uint32))
np.save('good.npy', np.array([[0,6],[4,5]], dtype=np.uint8))
np.save('bad.npy', np.array([[0,6],[4,7]], dtype=np.uint8))
"
printf '{"dtype": "uint8", "shape": [2, 2], "data": [[0, 6], [9, 5]]}\n' > bad.json

# A matching golden: status 0, nothing on stdout.
expect_status 0 popcount pc.npy --expect good.npy -o /dev/null
[ -z "$out" ] || fail "a match printed: $out"

# A differing golden: status 1, the element's index and both values, and a JSON report.
expect_status 1 popcount pc.npy --expect bad.npy -o /dev/null --report-json report.json
expect_out "[1, 1]"; expect_out "7"; expect_out "5"
expect_err "result differs from 'bad.npy'"
"$P" -c "import json; r = json.load(open('report.json')); assert not r['equal'], r" 2>/dev/null ||
  fail "report.json does not say the tensors differ: $(cat report.json 2>/dev/null)"

# A missing golden without --update: an I/O error naming it; with --update it is created in
# the format its extension names.
expect_status 5 popcount pc.npy --expect missing.npy -o /dev/null
expect_err "missing.npy"
expect_status 0 popcount pc.npy --expect new.json --update -o /dev/null
expect_err "created new.json"
"$P" -c "
import json; d = json.load(open('new.json'))
assert d['dtype'] == 'uint8' and d['data'] == [[0, 6], [4, 5]], d" || fail "new.json is not the result: $(cat new.json)"

# --update rewrites a differing golden in its own format (JSON here), and leaves an equal one.
expect_status 0 popcount pc.npy --expect bad.json --update -o /dev/null
expect_err "updated bad.json"
"$P" -c "
import json; d = json.load(open('bad.json'))
assert d['data'] == [[0, 6], [4, 5]], d" || fail "bad.json was not rewritten as JSON: $(cat bad.json)"
cp good.npy before.npy
expect_status 0 popcount pc.npy --expect good.npy --update -o /dev/null
expect_err "good.npy unchanged"
cmp -s good.npy before.npy || fail "an equal golden was rewritten"
finish
