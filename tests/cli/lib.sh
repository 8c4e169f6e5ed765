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

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures of $checks checks failed" >&2
    exit 1
  fi
  echo "$checks checks passed"
}
