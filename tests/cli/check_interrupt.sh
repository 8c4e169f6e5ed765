#!/usr/bin/env bash
# An interrupted `dmlbits check` (issue #44 item 1): SIGINT or SIGTERM while a case runs exits
# 130 (not 1, a mismatch's status), its summary says "interrupted" with the cases not run (not
# "N of M cases failed"), no golden changes even with --update (the goldens of the cases that
# finished first were renamed into place before), no --junit file is written, and nothing is
# left behind. On SIGINT and SIGTERM, with and without --update and --junit, on 1 and 2 jobs.
#
# The moment is made certain, not guessed with a sleep: case 6 of 12 reads a FIFO whose writer
# holds it open and writes nothing, so the signal comes while that case waits for its input;
# with one job the six cases before it have finished (their new goldens, with --update, are
# prepared), with two jobs the other worker goes on with the cases after it.
source "$(dirname "$0")/lib.sh"

cd "$WORK"
"${PYTHON:-python3}" - <<'PY' || { fail "making the cases"; finish; }
import json, numpy as np
a = np.arange(64, dtype=np.uint32) * 2654435761 % 2**32
b = a[::-1].copy()
np.save("a.npy", a.astype(np.uint32))
np.save("b.npy", b.astype(np.uint32))
want = (a & b).astype(np.uint32)
cases = []
for i in range(12):
    inputs = ["a.npy", "fifo.npy" if i == 6 else "b.npy"]
    # Half the goldens are right, half differ (with --update they would be rewritten).
    np.save(f"g{i}.npy", want if i % 2 == 0 else want ^ np.uint32(1))
    cases.append({"name": f"c{i}", "op": "and", "inputs": inputs, "expected": f"g{i}.npy"})
json.dump({"cases": cases}, open("m.json", "w"))
PY
sums() { md5sum g*.npy; }
before=$(sums)

interrupted_check() {  # SIGNAL JOBS UPDATE(0|1) JUNIT(0|1)
  local sig=$1 jobs=$2 update=$3 junit=$4 args=(-j "$2")
  [ "$update" = 1 ] && args+=(--update)
  [ "$junit" = 1 ] && args+=(--junit j.xml)
  local what="SIG$sig ${args[*]}"
  rm -f fifo.npy j.xml && mkfifo fifo.npy
  sleep 60 > fifo.npy &  # the writer: opens the FIFO (once dmlbits does) and writes nothing
  local writer=$! pid status
  "$DMLBITS" check m.json "${args[@]}" > out.txt 2> err.txt &
  pid=$!
  # Wait (at most 20 s) until dmlbits has the FIFO open: case 6 is waiting for its input.
  local waited=0
  until ls -l "/proc/$pid/fd" 2>/dev/null | grep -q 'fifo\.npy'; do
    sleep 0.02
    waited=$((waited + 1))
    [ "$waited" -lt 1000 ] || break
  done
  kill "-$sig" "$pid"
  wait "$pid" && status=0 || status=$?
  kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null
  checks=$((checks + 1))
  [ "$status" -eq 130 ] || fail "$what: status $status, expected 130; stdout: $(cat out.txt); stderr: $(cat err.txt)"
  checks=$((checks + 1))
  grep -q '^interrupted: [0-9]* passed, [0-9]* failed, [1-9][0-9]* not run' out.txt ||
    fail "$what: the summary does not say interrupted with the cases not run: $(cat out.txt)"
  checks=$((checks + 1))
  ! grep -q 'cases failed\|ERROR' out.txt err.txt || fail "$what: an interrupt reads as failures: $(cat out.txt err.txt)"
  checks=$((checks + 1))
  grep -qx 'dmlbits: interrupted after [0-9]* of 12 cases' err.txt || fail "$what: stderr: $(cat err.txt)"
  if [ "$update" = 1 ]; then
    checks=$((checks + 1))
    grep -q '; no golden file was updated$' out.txt || fail "$what: the summary does not say no golden was updated"
  fi
  checks=$((checks + 1))
  [ "$(sums)" = "$before" ] || fail "$what: goldens changed: $(diff <(echo "$before") <(sums))"
  expect_no_file j.xml
  checks=$((checks + 1))
  local left
  left=$(ls -A | grep -vxE 'a\.npy|b\.npy|g[0-9]+\.npy|m\.json|fifo\.npy|out\.txt|err\.txt|stderr')
  [ -z "$left" ] || fail "$what: left behind: $left"
}

for sig in INT TERM; do
  for jobs in 1 2; do
    for update in 0 1; do
      for junit in 0 1; do interrupted_check "$sig" "$jobs" "$update" "$junit"; done
    done
  done
done

# With one job the six cases before the FIFO finished: they are listed (three differ), with
# --update each says its golden was not updated.
interrupted_check INT 1 1 0
checks=$((checks + 1))
[ "$(grep -c "^FAIL\|^ok\|^UPDATED" out.txt)" -eq 6 ] && grep -q '^interrupted: 6 passed, 0 failed, 6 not run; no golden file was updated$' out.txt ||
  fail "one job, --update: the finished cases and the summary: $(cat out.txt)"
checks=$((checks + 1))
grep -q "^ok      c1: 'g1.npy' was not updated (interrupted)$" out.txt || fail "one job, --update: case c1's line: $(cat out.txt)"
interrupted_check TERM 1 0 1
checks=$((checks + 1))
grep -q '^interrupted: 3 passed, 3 failed, 6 not run$' out.txt || fail "one job: the summary: $(cat out.txt)"

# The same check uninterrupted still updates its goldens (the FIFO case given its input).
rm -f fifo.npy && cp b.npy fifo.npy
expect_status 0 check m.json --update -j 2
expect_out "12 passed, 0 failed, 6 golden files updated"
finish
