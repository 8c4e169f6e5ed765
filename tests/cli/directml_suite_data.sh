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
# d3d12 runs the operators it has a shader for ("gpu" in `dmlbits ops --json`) and refuses the
# others (auto runs them on the CPU): it checks copies of the manifests without their cases.
mkdir -p "$suite/d3d12"
"$PYTHON" - "$suite" "$("$DMLBITS" ops --json)" <<'PY' || fail "writing the d3d12 manifests"
import json, os, sys
suite, ops = sys.argv[1], json.loads(sys.argv[2])["ops"]
gpu = {o["verb"] for o in ops if o["gpu"]}
for name in os.listdir(suite):
    if name.endswith(".json"):
        with open(os.path.join(suite, name), encoding="utf-8") as f:
            doc = json.load(f)
        doc["cases"] = [c for c in doc["cases"] if c["op"] in gpu]
        doc["root"] = ".."
        with open(os.path.join(suite, "d3d12", name), "w", encoding="utf-8") as f:
            json.dump(doc, f)
PY
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
    m=$manifest
    [ "$backend" = d3d12 ] && m="$suite/d3d12/$(basename "$manifest")"
    n=$(ncases "$m")
    [ "$n" -gt 0 ] || continue
    expect_status 0 check "$m" --backend "$backend" ${isa:+--isa "$isa"}
    expect_out "$n passed, 0 failed"
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
