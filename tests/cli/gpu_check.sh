#!/usr/bin/env bash
# scripts/gpu-check and the folder it packs (issue #44 item 11): --help prints its usage comment
# and no line of code; the packed `run --help` works under a python3 without NumPy, where a run
# says in one line that it needs NumPy (status 2, no traceback); and on a D3D12 adapter (lavapipe
# is one) a short check passes, its timing table's d3d12 kernel, upload and readback per run
# (the warm-ups left out) each at most the measured runs' mean execution.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"
GPU_CHECK="$DMLBITS_SOURCE_DIR/scripts/gpu-check"

# ---- gpu-check --help: the leading comment, without the shebang and '# ' ----------------------
checks=$((checks + 1))
help=$("$GPU_CHECK" --help 2>&1) && status=0 || status=$?
[ "$status" -eq 0 ] || fail "gpu-check --help exited $status: $help"
[[ "$help" != *"set -euo"* && "$help" != *"#!"* && "$help" != *"# "* ]] ||
  fail "gpu-check --help prints code or comment marks: $help"
want=$(awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$GPU_CHECK")
[ "$help" = "$want" ] || fail "gpu-check --help is not its usage comment; it printed: $help"
[[ "$help" == "Packs what a GPU machine"* && "$help" == *"scripts/gpu-check [--build DIR] [--out DIR] [--run [ARGS...]]"* ]] ||
  fail "gpu-check --help lacks its first line or its usage line: $help"

# ---- the packed folder ----------------------------------------------------------------------------
checks=$((checks + 1))
if ! pack=$("$GPU_CHECK" --build "$(dirname "$DMLBITS")" --out "$WORK/pack" 2>&1); then
  if [[ "$pack" == *"libvkd3d-utils.so.1 not found"* ]]; then
    echo "no vkd3d here: the packed folder's checks skipped"
    finish
    exit 0
  fi
  fail "gpu-check could not pack: $pack"
  finish
fi

# A python3 without NumPy: an import of numpy fails, as where it is not installed.
cat > "$WORK/python-without-numpy" <<EOF
#!/bin/sh
exec "$P" -c 'import runpy, sys; sys.modules["numpy"] = None; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' "\$@"
EOF
chmod +x "$WORK/python-without-numpy"
"$WORK/python-without-numpy" -c 'import numpy' 2>/dev/null &&
  fail "the wrapper's python3 imports numpy: the checks below prove nothing"

checks=$((checks + 1))
out=$(PYTHON="$WORK/python-without-numpy" "$WORK/pack/run" --help 2>"$WORK/stderr") && status=0 || status=$?
err=$(cat "$WORK/stderr")
[ "$status" -eq 0 ] || fail "run --help without NumPy exited $status: $err"
[[ "$out" == *"usage:"*"--sizes-mib"* ]] || fail "run --help without NumPy lacks the usage: $out"
[[ "$err" != *Traceback* ]] || fail "run --help without NumPy: a traceback: $err"

checks=$((checks + 1))
out=$(PYTHON="$WORK/python-without-numpy" "$WORK/pack/run" --cases 1 --out "$WORK/res0" 2>"$WORK/stderr") && status=0 || status=$?
err=$(cat "$WORK/stderr")
[ "$status" -eq 2 ] || fail "run without NumPy exited $status, expected 2: $err"
[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ "$err" == "gpu_check: needs python3 with NumPy"*"PYTHON="* ]] ||
  fail "run without NumPy: not one line saying it needs python3 with NumPy or PYTHON=...: $err"

checks=$((checks + 1))
out=$(PYTHON="$WORK/no-such-python3" "$WORK/pack/run" --help 2>"$WORK/stderr") && status=0 || status=$?
err=$(cat "$WORK/stderr")
[ "$status" -eq 2 ] && [[ "$err" == "run: no '$WORK/no-such-python3' here"*"NumPy"* ]] ||
  fail "run with PYTHON naming nothing: exit $status, expected 2 and a line naming it: $err"

# ---- a short check on the adapter, and its timing table ------------------------------------------
available=$("$DMLBITS" devices --json | "$P" -c 'import json, sys; print(int(json.load(sys.stdin)["d3d12"]["available"]))')
if [ "$available" != 1 ]; then
  echo "no D3D12 adapter: the packed check's run skipped"
  finish
  exit 0
fi
checks=$((checks + 1))
PYTHON="$P" "$WORK/pack/run" --cases 4 --sizes-mib 1 --repeat 3 --warmup 1 --out "$WORK/res" > "$WORK/check.txt" 2>&1 &&
  status=0 || status=$?
[ "$status" -eq 0 ] || fail "the packed check exited $status: $(tail -n 30 "$WORK/check.txt")"
checks=$((checks + 1))
"$P" - "$WORK/res/timing.json" <<'PY' || fail "the timing table's d3d12 figures: $(cat "$WORK/res/timing.md" 2>&1)"
import json, sys
rows = json.load(open(sys.argv[1]))
assert sorted(r["op"] for r in rows) == ["and", "not", "popcount"], rows
for r in rows:
    for phase, s in r["per_run_s"].items():
        # Each happens within the execution it is part of: the warm-ups are not in it.
        assert 0 <= s <= r["execute_mean_s"] * (1 + 1e-9), (r["op"], phase, s, r["execute_mean_s"])
    assert r["per_run_s"]["dispatch"] > 0, r
PY
grep -q "kernel per run" "$WORK/res/timing.md" || fail "timing.md lacks its kernel column: $(cat "$WORK/res/timing.md")"

finish
