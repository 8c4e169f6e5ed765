#!/usr/bin/env bash
# How outputs are created and committed (issues #28 and #23 items 2-4): outputs that are not
# regular files are written in place and never replaced; a run that writes several files
# (check --update, --emit-dxdispatch) writes all of them or none; --sync. Expected results come
# from NumPy (np.invert); killing dmlbits mid-run is tests/crash/kill_test.py's part.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
"$PYTHON" -c "
import numpy as np
a = np.arange(256, dtype=np.uint8)
np.save('u8.npy', a)
np.save('expected.npy', np.invert(a))
np.save('other.npy', np.zeros(256, np.uint8))
"

# --- #23.2: a kernel's link to an open file (/dev/stdout, /dev/fd/N) is written in place. ---
# A stand-in for /dev/stdout, as root would meet it: the link must stay a link, the data must
# reach standard output's file, and the format defaults to .npy as for "-".
mkdir fakedev
ln -s /proc/self/fd/1 fakedev/stdout
checks=$((checks + 1))
"$DMLBITS" not u8.npy -o fakedev/stdout >sf.npy 2>err.txt && status=0 || status=$?
[ "$status" -eq 0 ] || fail "-o fakedev/stdout > sf.npy exited $status: $(cat err.txt)"
[ -L fakedev/stdout ] || fail "-o fakedev/stdout replaced the link with a file"
cmp -s sf.npy expected.npy || fail "-o fakedev/stdout: standard output's file is not the result"
# The same with --format npy, and with /dev/fd/1. Never the real /dev/stdout: a build with the
# bug, run as root, would replace the system's link with a file.
for target in fakedev/stdout /dev/fd/1; do
  checks=$((checks + 1))
  "$DMLBITS" not u8.npy -o "$target" --format npy >sf.npy 2>err.txt && status=0 || status=$?
  [ "$status" -eq 0 ] || fail "-o $target --format npy exited $status: $(cat err.txt)"
  cmp -s sf.npy expected.npy || fail "-o $target --format npy: standard output's file is not the result"
done
[ -L fakedev/stdout ] || fail "-o fakedev/stdout --format npy replaced the link with a file"
# Appending (>>) keeps what was there: the output goes through standard output itself.
printf 'head' >app.bin
checks=$((checks + 1))
"$DMLBITS" not u8.npy -o fakedev/stdout >>app.bin 2>err.txt || fail "-o fakedev/stdout >> app.bin failed: $(cat err.txt)"
{ printf 'head'; cat expected.npy; } | cmp -s - app.bin || fail "-o fakedev/stdout >> app.bin did not append"
# Another descriptor's file (/dev/fd/3): written in place, truncated first as cp does.
cp other.npy fd3.npy
echo "longer than the result, so that truncation shows $(head -c 2000 /dev/zero | tr '\0' x)" >>fd3.npy
checks=$((checks + 1))
"$DMLBITS" not u8.npy -o /dev/fd/3 --format npy 3<>fd3.npy 2>err.txt || fail "-o /dev/fd/3 failed: $(cat err.txt)"
cmp -s fd3.npy expected.npy || fail "-o /dev/fd/3: the file behind descriptor 3 is not the result"
# Side outputs follow the same rule.
checks=$((checks + 1))
"$DMLBITS" not u8.npy -o out.npy --time-json fakedev/stdout >tj.json 2>err.txt || fail "--time-json fakedev/stdout failed: $(cat err.txt)"
[ -L fakedev/stdout ] || fail "--time-json fakedev/stdout replaced the link"
"$PYTHON" -c "import json,sys; json.load(open('tj.json'))['phases']" 2>/dev/null || fail "--time-json fakedev/stdout: no timing JSON on standard output"
# A FIFO and /dev/null, as before: written in place, .npy by default.
mkfifo fifo
cat fifo >from_fifo.npy &
reader=$!
expect_status 0 not u8.npy -o fifo
wait "$reader"
cmp -s from_fifo.npy expected.npy || fail "-o FIFO: the reader did not get the result"
[ -p fifo ] || fail "-o FIFO replaced the FIFO"
expect_status 0 not u8.npy -o /dev/null
# A link to such a file cannot be written over in place with --in-place: A would be cut short
# while it is read.
cp u8.npy a.npy
expect_status 2 not /dev/fd/3 --in-place 3<a.npy
expect_err "--in-place needs input A to be a regular file"
cmp -s a.npy u8.npy || fail "--in-place /dev/fd/3 changed the file"

# --- #23.3: check --update writes no golden before every golden is known writable. ---
cat >m.json <<'JSON'
{"cases": [
 {"name": "one", "op": "not", "inputs": ["u8.npy"], "expected": "g1.npy"},
 {"name": "two", "op": "not", "inputs": ["u8.npy"], "expected": "missing/g2.npy"}
]}
JSON
cp other.npy g1.npy
expect_status 5 check m.json --update -j 1
expect_err "missing"
cmp -s g1.npy other.npy || fail "check --update rewrote g1.npy although missing/g2.npy cannot be written"
# A golden that fails while it is written (a link to /dev/full, which the checks before the run
# cannot tell from a writable device): nothing is updated, status 5.
ln -s /dev/full g2.npy
sed 's|missing/g2.npy|g2.npy|' m.json >m2.json
expect_status 5 check m2.json --update -j 1
expect_err "no golden file was updated"
cmp -s g1.npy other.npy || fail "check --update rewrote g1.npy although g2.npy could not be written"
# And when every golden can be written, all are, as NumPy computes them.
rm g2.npy
cp other.npy g2.npy
expect_status 0 check m2.json --update --sync
expect_out "2 golden files updated"
cmp -s g1.npy expected.npy && cmp -s g2.npy expected.npy || fail "check --update --sync: goldens not NumPy's result"

# --- #23.4: --emit-dxdispatch is all or nothing. ---
# The model fails while it is written (a link to /dev/full): its input file must not be left.
ln -s /dev/full rep.json
expect_status 5 not u8.npy -o out2.npy --emit-dxdispatch rep
expect_no_file rep-a.npy
expect_no_file out2.npy
rm rep.json
expect_status 0 not u8.npy -o out2.npy --emit-dxdispatch rep
[ -f rep.json ] && [ -f rep-a.npy ] || fail "--emit-dxdispatch rep: rep.json and rep-a.npy not both written"

# --- #37.10: side outputs follow the result: a run whose result cannot be written leaves none. ---
# The result fails while it is written (-o /dev/full: the checks before the run cannot tell it
# from a writable device): streamed (--explain-json is known before the result is written),
# then in memory (--emit-dxdispatch keeps the run in memory; its model is known before the
# result too), with --time-json, known after.
expect_status 5 not u8.npy -o /dev/full --explain-json ex.json --time-json tj2.json
expect_err "No space left on device"
expect_no_file ex.json
expect_no_file tj2.json
expect_status 5 not u8.npy -o /dev/full --explain-json ex.json --emit-dxdispatch dx --time-json tj2.json
expect_err "No space left on device"
for f in ex.json dx.json dx-a.npy tj2.json; do expect_no_file "$f"; done
# A stream from standard input cut short: the run fails after validation, while the result is
# written; the same without a device in play.
"$PYTHON" -c "import numpy as np; np.save('mib.npy', np.zeros(1 << 20, np.uint8))"
head -c 100000 mib.npy > cut.bin
checks=$((checks + 1))
"$DMLBITS" not - -o cut.npy --explain-json ex.json < cut.bin 2>err.txt && status=0 || status=$?
[ "$status" -eq 3 ] && grep -q "truncated" err.txt || fail "a truncated standard input exited $status, expected 3: $(cat err.txt)"
for f in cut.npy ex.json; do expect_no_file "$f"; done
# The run that succeeds writes all of them, the description being what --explain prints.
expect_status 0 not u8.npy -o out3.npy --explain-json ex.json --emit-dxdispatch dx --time-json tj2.json
for f in out3.npy ex.json dx.json dx-a.npy tj2.json; do [ -f "$f" ] || fail "a run that succeeded did not write $f"; done
cmp -s out3.npy expected.npy || fail "--explain-json run: the result is not NumPy's"
expect_status 0 not u8.npy --explain
[ "$out" = "$(cat ex.json)" ] || fail "--explain-json wrote other than --explain prints"
leftovers=$(find . -name '.*dmlbits-*')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"

# --- #37.10: replacing a file needs write access to its folder, and the message says so. ---
# A writable file in a folder that is not: -o checks the folder before the run, --in-place
# meets it when the result is created. Root is not held back by permissions: as root the runs
# are made as nobody (setpriv, util-linux); as another user, as that user.
as_user=()
if [ "$(id -u)" -eq 0 ]; then
  if command -v setpriv > /dev/null; then
    as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    chmod 755 "$WORK"  # nobody reaches the folder, reads u8.npy and writes the files below
  else
    as_user=(none)
  fi
fi
if [ "${as_user[*]}" = none ]; then
  echo "note: running as root without setpriv: the unwritable-folder case did not run" >&2
else
  mkdir locked
  cp other.npy locked/out.npy && cp u8.npy locked/a.npy && chmod 666 locked/out.npy locked/a.npy
  chmod 555 locked
  for args in "-o locked/out.npy" "--in-place"; do
    [ "$args" = --in-place ] && target=locked/a.npy in=locked/a.npy || target=locked/out.npy in=u8.npy
    checks=$((checks + 1))
    # shellcheck disable=SC2086  # $args is two words or one
    "${as_user[@]}" "$DMLBITS" not "$in" $args 2>err.txt && status=0 || status=$?
    [ "$status" -eq 5 ] || fail "not $in $args in an unwritable folder exited $status, expected 5: $(cat err.txt)"
    grep -qF "writing '$target': replacing '$target' atomically needs write access to its folder 'locked': Permission denied" err.txt ||
      fail "not $in $args in an unwritable folder: $(cat err.txt)"
  done
  cmp -s locked/out.npy other.npy && cmp -s locked/a.npy u8.npy || fail "a file in an unwritable folder changed"
  chmod 755 locked
fi

# --- #28.2: --sync writes the same bytes; nothing is left beside the outputs. ---
expect_status 0 not u8.npy -o synced.npy --sync --time-json synced.json
cmp -s synced.npy expected.npy || fail "--sync: the output is not NumPy's result"
leftovers=$(find . -name '.*dmlbits-*')
[ -z "$leftovers" ] || fail "temporary files left: $leftovers"
finish
