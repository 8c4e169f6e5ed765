#!/usr/bin/env bash
# The operator verbs through the binary: operands, outputs, exit statuses, --explain, atomic
# output. Expected values are hand-computed or from DirectML's documentation.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"
"$P" -c "
import numpy as np
np.save('pc.npy', np.array([[0,123],[456,789]], dtype=np.uint32))
np.save('n8.npy', np.array([[0,128],[42,255]], dtype=np.uint8))
np.save('row.npy', np.array([1,2,4], dtype=np.uint8))
np.save('col.npy', np.array([[1],[3]], dtype=np.uint8))
np.save('i32.npy', np.array([-1, 5], dtype=np.int32))
"
json_data() { "$P" -c "import json,sys; print(json.load(sys.stdin)['data'])"; }

# Documented examples (DirectML API reference).
expect_status 0 popcount pc.npy
[ "$(printf '%s' "$out" | json_data)" = "[[0, 6], [4, 5]]" ] || fail "popcount example: $out"
expect_out '"dtype": "uint8"'
expect_status 0 popcount pc.npy --out-dtype uint32
expect_out '"dtype": "uint32"'
expect_status 0 not n8.npy
[ "$(printf '%s' "$out" | json_data)" = "[[255, 127], [213, 0]]" ] || fail "not example: $out"
# An array literal takes the other operand's dtype.
expect_status 0 xor n8.npy '[[255,128],[15,240]]'
[ "$(printf '%s' "$out" | json_data)" = "[[255, 0], [37, 15]]" ] || fail "xor example: $out"

# Every DirectML name of a verb works.
for v in and bit-and BIT_AND DML_OPERATOR_ELEMENT_WISE_BIT_AND; do
  expect_status 0 "$v" n8.npy 0x0f
  [ "$(printf '%s' "$out" | json_data)" = "[[0, 0], [10, 15]]" ] || fail "$v: $out"
done
expect_status 0 BIT_SHIFT_LEFT n8.npy 1
[ "$(printf '%s' "$out" | json_data)" = "[[0, 0], [84, 254]]" ] || fail "shl: $out"
expect_status 0 shr n8.npy 0b11
[ "$(printf '%s' "$out" | json_data)" = "[[0, 16], [5, 31]]" ] || fail "shr: $out"
expect_status 0 bit-count pc.npy
# Shift counts past the width: by default (directml) a uint8 is shifted as a 32-bit lane by
# count & 31 (9: 0; 33: as 1); 0 with zero; count mod width with wrap.
expect_status 0 shl n8.npy 9
[ "$(printf '%s' "$out" | json_data)" = "[[0, 0], [0, 0]]" ] || fail "shl 9 default: $out"
expect_status 0 shl n8.npy 33
[ "$(printf '%s' "$out" | json_data)" = "[[0, 0], [84, 254]]" ] || fail "shl 33 default: $out"
expect_status 0 shl n8.npy 33 --shift-overflow directml
[ "$(printf '%s' "$out" | json_data)" = "[[0, 0], [84, 254]]" ] || fail "shl 33 directml: $out"
expect_status 0 shl n8.npy 33 --shift-overflow zero
[ "$(printf '%s' "$out" | json_data)" = "[[0, 0], [0, 0]]" ] || fail "shl 33 zero: $out"
expect_status 0 shl n8.npy 9 --shift-overflow wrap
[ "$(printf '%s' "$out" | json_data)" = "[[0, 0], [84, 254]]" ] || fail "shl 9 wrap: $out"
expect_status 2 shl n8.npy 9 --shift-overflow clamp

# Broadcasting: (2,1) with (3,) -> (2,3).
expect_status 0 or col.npy row.npy
[ "$(printf '%s' "$out" | json_data)" = "[[1, 3, 5], [3, 3, 7]]" ] || fail "broadcast or: $out"
expect_status 3 or row.npy '[1,2]'
expect_err "shapes (3,) and (2,) cannot be broadcast together"; expect_one_line

# Literals: hex, binary, negative where signed; out of range refused with the operand named.
expect_status 0 and i32.npy -0x1
[ "$(printf '%s' "$out" | json_data)" = "[-1, 5]" ] || fail "and -0x1: $out"
expect_status 3 and n8.npy 256
expect_err "literal '256'"; expect_err "out of range for uint8"; expect_one_line
expect_status 3 and 1 2
expect_err "use --dtype"
expect_status 0 and 6 3 --dtype uint16
expect_out '"dtype": "uint16"'; expect_out '"data": 2'
# ./NAME reaches a file whose name looks like a literal.
cp n8.npy 12
expect_status 0 not ./12
[ "$(printf '%s' "$out" | json_data)" = "[[255, 127], [213, 0]]" ] || fail "./12: $out"

# Standard input, at most once; -o - writes .npy for the next process.
"$DMLBITS" not n8.npy -o - < /dev/null | "$DMLBITS" not - -o back.npy || fail "pipeline failed"
cmp <("$P" -c "import numpy as np,sys; sys.stdout.buffer.write(np.load('back.npy').tobytes())") \
    <("$P" -c "import numpy as np,sys; sys.stdout.buffer.write(np.load('n8.npy').tobytes())") || fail "not(not(x)) != x"
echo '[[1,2],[3,4]]' > nested.json
run and - - < nested.json
[ "$status" -eq 2 ] || fail "two '-' operands exited $status"
expect_err "standard input"
expect_status 0 xor - 0x0f --dtype uint8 < nested.json
[ "$(printf '%s' "$out" | json_data)" = "[[14, 13], [12, 11]]" ] || fail "stdin json: $out"

# Output formats.
expect_status 0 not n8.npy -o r.json
"$P" -c "import json; d=json.load(open('r.json')); assert d['data']==[[255,127],[213,0]] and d['shape']==[2,2]" || fail "r.json content"
expect_status 0 not n8.npy -o r.dat --format npy
"$P" -c "import numpy as np; assert np.load('r.dat').tolist()==[[255,127],[213,0]]" || fail "r.dat content"
expect_status 2 not n8.npy -o r.dat
expect_err "--format"
expect_status 0 not n8.npy --hex
expect_out '"0xff"'

# A failed run leaves no output file, and an existing one untouched.
expect_status 3 xor n8.npy pc.npy -o fail.npy
expect_err "different data types"; expect_no_file fail.npy
echo keep > existing.npy
expect_status 3 xor n8.npy pc.npy -o existing.npy
[ "$(cat existing.npy)" = keep ] || fail "existing output was modified by a failed run"
[ -z "$(ls -A | grep dmlbits-)" ] || fail "temporary files left behind: $(ls -A)"

# -o may not name an input (issue #23 item 1: status 2, the input untouched); --in-place is the
# way to overwrite A, atomically.
cp n8.npy self.npy
expect_status 2 not self.npy -o self.npy
expect_err "input A and -o name the same file 'self.npy'"
cmp -s self.npy n8.npy || fail "-o input: the input was changed"
cp n8.npy inplace.npy
expect_status 0 xor inplace.npy 0xff --in-place
"$P" -c "import numpy as np; assert np.load('inplace.npy').tolist()==[[255,127],[213,0]]" || fail "--in-place"
# BIT_COUNT's output may not alias its input, so popcount has no --in-place at all.
expect_status 2 popcount pc.npy --in-place
expect_status 3 or row.npy col.npy --in-place
expect_err "cannot overwrite input A"

# Feature levels: spellings, refusals naming the lowest accepting level.
for l in 4.1 4_1 DML_FEATURE_LEVEL_4_1; do expect_status 0 xor i32.npy 1 --feature-level "$l"; done
expect_status 3 xor i32.npy 1 --feature-level 3_0
expect_err "xor: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)"; expect_one_line
expect_status 2 xor i32.npy 1 --feature-level 4_2
expect_status 3 and n8.npy 1 -l 2_1
expect_err "needs DML_FEATURE_LEVEL_3_0 or later (requested 2_1)"
expect_status 3 shl n8.npy 1 -l 2_1
expect_err "2 dimensions need DML_FEATURE_LEVEL_3_0"
expect_status 3 shl i32.npy 1
expect_err "not supported at any feature level"

# --explain prints the DirectML description without running.
expect_status 0 or col.npy row.npy --explain
"$P" -c "
import json,sys
d=json.loads(sys.argv[1])
assert d['operator']=='DML_OPERATOR_ELEMENT_WISE_BIT_OR', d
t=d['tensors']
assert t['ATensor']['Strides']==[1,0] and t['ATensor']['Sizes']==[2,3], t
assert t['BTensor']['Strides']==[0,1], t
assert t['OutputTensor']['TotalTensorSizeInBytes']==8, t
assert d['feature_level']=='DML_FEATURE_LEVEL_6_4'
" "$out" || fail "--explain content: $out"
expect_status 0 or col.npy row.npy --explain-json ex.json -o o.npy
[ -s ex.json ] && [ -s o.npy ] || fail "--explain-json did not write both files"

# Timing.
expect_status 0 not n8.npy -o t.npy --time --time-json t.json
expect_err "execute"; expect_err "GB/s"
"$P" -c "import json; d=json.load(open('t.json')); assert 'execute_s' in d['phases'] and d['total_s']>0" || fail "time json"

# --threads and DMLBITS_THREADS: -v reports the count; the result does not depend on it, in
# memory (--repeat) or streamed, on one thread (no reader thread either) or three. 6 MiB of
# uint32 per operand: above the 4 MiB where the backend splits the work.
"$P" -c "
import numpy as np
r = np.random.default_rng(3)
a = r.integers(0, 2**32, size=1_572_869, dtype=np.uint32); b = r.integers(0, 2**32, size=a.size, dtype=np.uint32)
np.save('ta.npy', a); np.save('tb.npy', b); np.save('tand.npy', a & b)"
for t in 1 3; do
  expect_status 0 and ta.npy tb.npy -o t$t.npy --backend cpu --threads "$t" -v
  expect_err "$t thread"
  cmp -s t$t.npy tand.npy || fail "--threads $t: streamed and differs from NumPy"
  expect_status 0 and ta.npy tb.npy -o tm$t.npy --backend cpu --threads "$t" --repeat 2
  cmp -s tm$t.npy tand.npy || fail "--threads $t: in-memory and differs from NumPy"
done
DMLBITS_THREADS=3 run not n8.npy -o t.npy --backend cpu -v
expect_err "3 threads"
DMLBITS_THREADS=3 run not n8.npy -o t.npy --backend cpu -v --threads 1
expect_err "1 thread)"
for bad in 0 257 two; do expect_status 2 not n8.npy -o t.npy --threads "$bad"; done
DMLBITS_THREADS=0 expect_status 2 not n8.npy -o t.npy
expect_err "DMLBITS_THREADS: '0' is not a thread count from 1 to 256"; expect_one_line
DMLBITS_THREADS=1 run devices
expect_out "1 thread"
# DMLBITS_THREADS=1 keeps a streamed run on one thread; by default one with 64 MiB of output
# or more has two. Counted in /proc while the run is held up writing into a FIFO that is not
# being read. Under 64 MiB (ta.npy, 6 MiB), and with two streamed inputs at any size, a streamed
# run stays on one thread whatever the count (the pipeline measured slower there).
"$P" -c "import numpy as np; np.save('t64.npy', np.zeros(16 << 20, dtype=np.uint32))"
for case in "1 1 not t64.npy" "2 2 not t64.npy" "2 1 not ta.npy" "2 1 and ta.npy tb.npy"; do
  set -- $case
  t=$1 want=$2
  shift 2
  rm -f fifo.npy && mkfifo fifo.npy
  DMLBITS_THREADS=$t "$DMLBITS" "$@" -o fifo.npy --backend cpu 2> stderr.txt &
  pid=$!
  exec 3< fifo.npy
  head -c 4096 <&3 > /dev/null  # it is writing: its threads are running
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")
  cat <&3 > /dev/null
  exec 3<&-
  wait "$pid" || fail "DMLBITS_THREADS=$t into a FIFO failed: $(cat stderr.txt)"
  [ "$threads" = "$want" ] || fail "DMLBITS_THREADS=$t $1: $threads threads while streaming, expected $want"
done
expect_status 2 not n8.npy -o t.npy --threads 2 --backend d3d12
expect_err "no choice of CPU threads"; expect_one_line

# Usage errors.
expect_status 2 and n8.npy
expect_status 2 frobnicate
expect_status 2 and n8.npy 1 --backend nosuch
expect_status 5 not missing.npy
expect_err "reading 'missing.npy'"; expect_one_line
finish
