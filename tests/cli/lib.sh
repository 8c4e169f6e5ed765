# Helpers for CLI tests. Source it; each check prints what failed and counts failures; call
# `finish` at the end to exit non-zero if any check failed.
set -u
: "${DMLBITS:?set DMLBITS to the dmlbits binary}"
: "${DMLBITS_SOURCE_DIR:?set DMLBITS_SOURCE_DIR}"
TESTDATA="$DMLBITS_SOURCE_DIR/testdata"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0
checks=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# op_verbs: the operators' verbs, one line, from the program's operator table (`dmlbits ops
# --json`), for loops over every operator: a test never lists them itself.
op_verbs() {
  "$DMLBITS" ops --json | "${PYTHON:-python3}" -c 'import json, sys; print(" ".join(o["verb"] for o in json.load(sys.stdin)["ops"]))'
}

# run ARGS...: runs dmlbits, leaving $status, $out (stdout) and $err (stderr).
run() {
  checks=$((checks + 1))
  out=$("$DMLBITS" "$@" 2>"$WORK/stderr") && status=0 || status=$?
  err=$(cat "$WORK/stderr")
}

# expect_status N ARGS...: dmlbits ARGS exits with N.
expect_status() {
  local want=$1; shift
  run "$@"
  [ "$status" -eq "$want" ] || fail "dmlbits $* exited $status, expected $want; stderr: $err"
}

# expect_err TEXT: the last run's stderr contains TEXT.
expect_err() { [[ "$err" == *"$1"* ]] || fail "stderr lacks '$1'; it was: $err"; }
# expect_out TEXT: the last run's stdout contains TEXT.
expect_out() { [[ "$out" == *"$1"* ]] || fail "stdout lacks '$1'; it was: $out"; }
# expect_one_line: the last run's stderr is a single line starting "dmlbits: ".
expect_one_line() {
  [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] && [[ "$err" == "dmlbits: "* ]] ||
    fail "stderr is not one 'dmlbits: ' line: $err"
}
# expect_no_file PATH
expect_no_file() { [ ! -e "$1" ] || fail "$1 exists but should not"; }
# writing_output PID: PID has an output file under way in the current folder: an unnamed file
# (O_TMPFILE, "DIR/#N (deleted)" among its descriptors) or, where the file system has none, a
# temporary ".NAME.dmlbits-XXXXXX".
writing_output() {
  ls -A | grep -q 'dmlbits-' || ls -l "/proc/$1/fd" 2>/dev/null | grep -F "$PWD/#" | grep -q '(deleted)'
}

# Memory figures. A bound is what dmlbits itself holds, on top of what a run that holds nothing
# takes in the same build (`dmlbits --version`, measured once): so a sanitizer's runtime, a
# larger libc or another CPU's code paths move both sides alike. In a sanitizer build
# (DMLBITS_SANITIZED=1, set by tests/CMakeLists.txt) runs are measured with ASan's quarantine
# off (freed blocks would otherwise stay resident, up to 256 MiB of them), and the data is
# counted with its shadow memory: one byte of shadow for every eight.
DMLBITS_SANITIZED=${DMLBITS_SANITIZED:-0}
if [ "$DMLBITS_SANITIZED" = 1 ]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0"
fi
baseline_rss_kib=""
# peak_rss_kib ARGS...: runs ARGS, prints the peak RSS in KiB (output and status discarded).
# need_d3d12_adapter: the script needs a D3D12 adapter (lavapipe is one). Without one it is
# skipped (exit 77), unless DMLBITS_REQUIRE_D3D12=1 says CI must have one: then it fails.
# Leaves `dmlbits devices --json` in $devices.
need_d3d12_adapter() {
  local available reason
  devices=$("$DMLBITS" devices --json) || { echo "FAIL: dmlbits devices --json failed" >&2; exit 1; }
  available=$("${PYTHON:-python3}" -c "import json,sys; print(int(json.loads(sys.argv[1])['d3d12']['available']))" "$devices")
  [ "$available" = 1 ] && return 0
  reason=$("${PYTHON:-python3}" -c "import json,sys; print(json.loads(sys.argv[1])['d3d12'].get('reason',''))" "$devices")
  if [ "${DMLBITS_REQUIRE_D3D12:-}" = 1 ]; then
    echo "FAIL: DMLBITS_REQUIRE_D3D12=1 but the d3d12 backend is unavailable: $reason" >&2
    exit 1
  fi
  echo "d3d12 backend unavailable, skipped: $reason" >&2
  exit 77
}

peak_rss_kib() { /usr/bin/time -o "$WORK/rss.txt" -f '%M' "$@" >/dev/null 2>&1; tail -n 1 "$WORK/rss.txt"; }
# expect_rss_within RSS_KIB DATA_KIB WHAT: a peak RSS of a run whose own data is DATA_KIB is
# within the bound: the baseline, the data (and its shadow), and 16 MiB for the allocator's
# rounding, thread stacks and pages of the binary that --version leaves untouched.
expect_rss_within() {
  checks=$((checks + 1))
  if [ -z "$baseline_rss_kib" ]; then baseline_rss_kib=$(peak_rss_kib "$DMLBITS" --version); fi
  local data=$2
  [ "$DMLBITS_SANITIZED" = 1 ] && data=$((data + data / 8))
  local bound=$((baseline_rss_kib + data + 16 * 1024))
  [ "$1" -lt "$bound" ] || fail "$3: peak RSS $1 KiB, bound $bound KiB ($2 KiB of data over a baseline of $baseline_rss_kib KiB)"
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures of $checks checks failed" >&2
    exit 1
  fi
  echo "$checks checks passed"
}
