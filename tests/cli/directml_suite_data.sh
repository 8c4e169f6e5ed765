#!/usr/bin/env bash
# The DirectML conformance suite's data (scripts/make_directml_suite.py; tests/directml/run runs
# it on real DirectML under wine) checked on Linux: every manifest passes on every backend
# `dmlbits devices --json` lists (cpu with each instruction set the host has, cpu-reference, and
# d3d12 where vkd3d runs), so that a DirectML disagreement in the suite is DirectML's, not the
# generator's, and the d3d12 backend meets the same edge values.
source "$(dirname "$0")/lib.sh"
suite="$WORK/suite"
"$PYTHON" "$DMLBITS_SOURCE_DIR/scripts/make_directml_suite.py" "$suite" > "$WORK/generate.txt" 2>&1 ||
  { cat "$WORK/generate.txt" >&2; fail "make_directml_suite.py failed"; finish; }

ncases() { "$PYTHON" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cases']))" "$1"; }
combos=$("$PYTHON" -c "
import json, sys
for b in json.loads(sys.argv[1])['backends']:
    for isa in b.get('isas') or ['']:
        print(b['name'], isa)
" "$("$DMLBITS" devices --json)")
[ -n "$combos" ] || fail "no backends listed"

for manifest in "$suite"/*.json; do
  want=$(ncases "$manifest")
  [ "$want" -gt 0 ] || fail "$manifest has no cases"
  while read -r backend isa; do
    expect_status 0 check "$manifest" --backend "$backend" ${isa:+--isa "$isa"}
    expect_out "$want passed, 0 failed"
  done <<< "$combos"
done

# The expected outputs must be able to fail: a flipped bit in one is a mismatch.
"$PYTHON" - "$suite" <<'PY'
import numpy as np, sys
p = sys.argv[1] + "/xor_float32_r3_expected.npy"
x = np.load(p)
x.view(np.uint32).reshape(-1)[17] ^= 1 << 22
np.save(p, x)
PY
expect_status 1 check "$suite/bitwise.json" --backend cpu-reference --filter xor_float32_r3
expect_out "FAIL    xor_float32_r3: mismatch"
finish
