#!/bin/bash
# Every malformed .npy in testdata/npy/bad is refused by `dmlbits info` and by an operation:
# exit status 3 (invalid input), one stderr line that names the file and contains the substring
# listed in bad/expected_errors.json, and no output file (not even a leftover temporary one).
source "$(dirname "$0")/lib.sh"

BAD="$TESTDATA/npy/bad"
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || { echo "no Python to read expected_errors.json" >&2; exit 77; }

# "file<TAB>substring" lines from the expectations.
table=$("$PY" -c '
import json, sys
for k, v in sorted(json.load(open(sys.argv[1])).items()):
    assert "\t" not in v and "\n" not in v
    print(k + "\t" + v)
' "$BAD/expected_errors.json") || { fail "cannot read $BAD/expected_errors.json"; finish; }

# The expectations and the folder list the same files.
listed=$(printf '%s\n' "$table" | cut -f1)
present=$(cd "$BAD" && ls -1 -- *.npy | LC_ALL=C sort)
[ "$(printf '%s\n' "$listed" | LC_ALL=C sort)" = "$present" ] ||
  fail "expected_errors.json and $BAD list different files"
[ "$(printf '%s\n' "$listed" | wc -l)" -ge 40 ] || fail "fewer than 40 bad files"

cd "$WORK" || exit 1
while IFS=$'\t' read -r name want; do
  file="$BAD/$name"

  expect_status 3 info "$file"
  expect_one_line
  expect_err "'$file'"
  expect_err "$want"
  [ -z "$out" ] || fail "info $name printed to stdout: $out"

  expect_status 3 info --json "$file"
  expect_one_line
  expect_err "$want"

  expect_status 3 not "$file" -o "$WORK/out.npy"
  expect_one_line
  expect_err "'$file'"
  expect_err "$want"
  expect_no_file "$WORK/out.npy"

  expect_status 3 xor "$file" 0 -o "$WORK/out.json"
  expect_one_line
  expect_err "$want"
  expect_no_file "$WORK/out.json"

  # No temporary file left behind either.
  leftovers=$(find "$WORK" -mindepth 1 -name '.out.*' -print)
  [ -z "$leftovers" ] || fail "$name: left $leftovers"
done <<<"$table"

# A bad file beside a good one: info reports both, the good one on stdout, and exits 3.
expect_status 3 info "$TESTDATA/npy/le_uint8.npy" "$BAD/truncated_data.npy"
expect_out "le_uint8.npy"
expect_one_line
expect_err "truncated"

# An existing output file is left untouched when the input is bad.
printf 'keep' >"$WORK/keep.npy"
expect_status 3 not "$BAD/trailing_garbage.npy" -o "$WORK/keep.npy"
[ "$(cat "$WORK/keep.npy")" = keep ] || fail "keep.npy was changed by a failed run"

finish
