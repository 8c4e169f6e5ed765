#!/usr/bin/env bash
# Two outputs, or an output and an input, golden or manifest, naming one file (issue #23 item
# 1): a usage error (status 2) before anything is read or written, whether the names are equal,
# differ but resolve alike (./x, a symbolic or hard link), or are both standard output.
# --in-place stays the one way to write over an input.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
"$PYTHON" -c "
import numpy as np
np.save('u8.npy', np.array([0, 1, 2, 0xf0], dtype=np.uint8))
np.save('w8.npy', np.array([255, 254, 253, 0x0f], dtype=np.uint8))   # not(u8), by hand
np.save('xor.npy', np.array([0x0f, 0x0e, 0x0d, 0xff], dtype=np.uint8))  # u8 ^ 0x0f, by hand
"
# The folder's names, times and contents, but for lib.sh's record of standard error.
snapshot() { ls -l --time-style=full-iso -I stderr; find . -type f ! -name stderr -exec md5sum {} + | sort; }
# refused WHAT ARGS...: dmlbits ARGS is status 2 with one line naming the clash, and every file
# in the folder is as it was (nothing written, nothing created).
refused() {
  local what=$1; shift
  local before after
  before=$(snapshot)
  expect_status 2 "$@"
  expect_err "$what"
  expect_one_line
  after=$(snapshot)
  [ "$before" = "$after" ] || fail "dmlbits $* changed the folder"
}

# The issue's cases.
cp w8.npy g.npy
refused "--expect and --report-json name the same file 'g.npy'" not u8.npy --expect g.npy --report-json g.npy
cmp -s g.npy w8.npy || fail "the golden was overwritten"
cp u8.npy in.npy
refused "input A and --time-json name the same file 'in.npy'" not in.npy -o o.npy --time-json in.npy
expect_no_file o.npy
refused "-o and --time-json name the same file 'r.npy'" not u8.npy -o r.npy --time-json r.npy
cp u8.npy col-a.npy
refused "-o and --emit-dxdispatch name the same file 'col-a.npy'" xor u8.npy 0x0f -o col-a.npy --emit-dxdispatch col
cmp -s col-a.npy u8.npy || fail "col-a.npy was overwritten"
refused "input A and --emit-dxdispatch name the same file 'col-a.npy'" xor col-a.npy 0x0f -o r.npy --emit-dxdispatch col
refused "--time-json and --emit-dxdispatch name the same file 'm.json'" not u8.npy -o r.npy --time-json m.json --emit-dxdispatch m
# Two writers of standard output.
refused "-o and --time-json both write standard output" not u8.npy -o - --time-json -
refused "-o and --explain-json both write standard output" not u8.npy -o - --explain-json -
refused "the result and --time-json both write standard output" not u8.npy --time-json -
refused "--explain and --explain-json both write standard output" not u8.npy --explain --explain-json -
refused "-o and --report-json both write standard output" not u8.npy -o - --expect w8.npy --report-json -
# Other spellings of one file: ./, a folder and .., a symbolic link, a hard link.
mkdir sub
refused "-o 'r.npy' and --time-json './sub/../r.npy' are the same file" not u8.npy -o r.npy --time-json ./sub/../r.npy
ln -s in.npy link.npy
refused "input A 'link.npy' and -o 'in.npy' are the same file" not link.npy -o in.npy
ln in.npy hard.npy
refused "input A 'in.npy' and --report-json 'hard.npy' are the same file" not in.npy --expect w8.npy --report-json hard.npy
refused "-o and --expect (with --update) name the same file 'g.npy'" not u8.npy -o g.npy --expect g.npy --update
refused "input B and -o name the same file 'in.npy'" and u8.npy in.npy -o in.npy
# --in-place writes over A, and may (B is read whole first); not over a golden or a side output.
refused "--in-place and --expect name the same file 'in.npy'" not in.npy --in-place --expect in.npy
refused "input A and --time-json name the same file 'in.npy'" not in.npy --in-place --time-json in.npy
cp u8.npy ip.npy
expect_status 0 and ip.npy ip.npy --in-place
cmp -s ip.npy u8.npy || fail "and x x --in-place changed x"
expect_status 0 not ip.npy --in-place
cmp -s ip.npy w8.npy || fail "--in-place did not write not(x)"
# What stays allowed: reading one file twice, standard input with standard output, the null
# device more than once, the text report going to standard error when --report-json takes
# standard output.
expect_status 0 and u8.npy u8.npy -o - --format json
checks=$((checks + 1))
"$DMLBITS" not - -o - < u8.npy > p.npy || fail "not - -o - failed"
cmp -s p.npy w8.npy || fail "not - -o - did not give not(u8)"
expect_status 0 not u8.npy -o /dev/null --time-json /dev/null
expect_status 0 not u8.npy --expect w8.npy --time-json -
"$PYTHON" -c "import json,sys; json.loads(sys.argv[1])" "$out" || fail "--time-json - is not JSON alone: $out"
expect_status 1 not u8.npy --expect u8.npy --report-json -
"$PYTHON" -c "import json,sys; assert not json.loads(sys.argv[1])['equal']" "$out" || fail "--report-json - is not JSON alone: $out"
expect_err "mismatch with 'u8.npy'"

# check: --junit against a manifest, a case's input or golden; --junit - moves the case lines
# to standard error.
cat > m.json <<'JSON'
{"cases": [{"name": "x", "op": "xor", "inputs": ["u8.npy", "0x0f"], "expected": "xor.npy"}]}
JSON
refused "--junit and manifest name the same file 'm.json'" check m.json --junit m.json
refused "--junit and case 'x' golden name the same file 'xor.npy'" check m.json --junit xor.npy
refused "--junit and case 'x' input name the same file 'u8.npy'" check m.json --junit u8.npy
expect_status 0 check m.json --junit -
[[ "$out" == "<?xml"* ]] || fail "check --junit -: standard output is not the XML alone: $out"
expect_err "1 passed, 0 failed"

# check --update (issue #37 item 3): a golden that is the case's own input, another case's
# input, or written again by a second case is refused as --expect FILE --update is, before any
# case runs; without --update the goldens are only read.
cat > self.json <<'JSON'
{"cases": [{"name": "x", "op": "xor", "inputs": ["in.npy", "0x0f"], "expected": "in.npy"}]}
JSON
refused "case 'x' input and case 'x' golden name the same file 'in.npy'" check self.json --update
cmp -s in.npy u8.npy || fail "check --update wrote over the case's input"
cat > other.json <<'JSON'
{"cases": [{"name": "x", "op": "xor", "inputs": ["in.npy", "0x0f"], "expected": "xor.npy"},
           {"name": "y", "op": "not", "inputs": ["w8.npy"], "expected": "hard.npy"}]}
JSON
refused "case 'x' input 'in.npy' and case 'y' golden 'hard.npy' are the same file" check other.json --update
expect_status 0 check other.json
cat > twice.json <<'JSON'
{"cases": [{"name": "x", "op": "xor", "inputs": ["u8.npy", "0x0f"], "expected": "xor.npy"},
           {"name": "y", "op": "xor", "inputs": ["0x0f", "u8.npy"], "expected": "xor.npy"}]}
JSON
refused "case 'x' golden and case 'y' golden name the same file 'xor.npy'" check twice.json --update
expect_status 0 check twice.json
finish
