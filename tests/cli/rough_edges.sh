#!/usr/bin/env bash
# The second new-user pass's rough edges (issue #23 items 5, 7-12, 14, 15, 17, 18), each
# through the binary. Expected values are hand-computed.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
"$PYTHON" -c "
import numpy as np
np.save('u8.npy', np.array([0, 1, 2, 0xf0], dtype=np.uint8))
np.save('w8.npy', np.array([255, 254, 253, 0x0f], dtype=np.uint8))   # not(u8), by hand
np.save('bad8.npy', np.array([255, 0, 0, 0], dtype=np.uint8))
np.save('u64.npy', np.array([1, 2], dtype=np.uint64))
np.save('big.npy', np.zeros(4_000_000, dtype=np.uint8))
np.save('huge.npy', np.zeros(64 << 20, dtype=np.uint8))   # 64 MiB: a streamed run uses two threads
"

# ---- item 5: SIGINT while standard input blocks on a slow pipe -------------------------------
# interrupted_while_reading BYTES FILE THREADS: dmlbits reads BYTES of FILE from a pipe whose
# writer then sleeps; SIGINT must end it within 2 s with status 130, the existing output
# untouched. 100000 bytes of big.npy (4 MB, one thread) are read on the main thread; 1500000
# (three 512 KiB chunks) of huge.npy (64 MiB: pipelined) by a streamed run's reader thread, which
# blocks signals. THREADS: the run's threads while it waits, from /proc.
interrupted_while_reading() {
  checks=$((checks + 1))
  echo keep > out.npy
  rm -f slow.fifo; mkfifo slow.fifo
  (head -c "$1" "$2"; sleep 8) > slow.fifo &
  local writer=$!
  "$DMLBITS" not - -o out.npy --quiet --threads 2 < slow.fifo 2>err.txt &
  local pid=$!
  sleep 1
  local threads=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status")
  [ "$threads" = "$3" ] || fail "SIGINT after $1 bytes of $2: $threads threads while reading, expected $3"
  local start=$(date +%s%N)
  kill -INT "$pid"
  local st=0
  wait "$pid" || st=$?
  local ms=$(( ($(date +%s%N) - start) / 1000000 ))
  kill "$writer" 2>/dev/null; wait "$writer" 2>/dev/null
  [ "$st" -eq 130 ] || fail "SIGINT after $1 bytes of a slow pipe: exit $st, expected 130 ($(cat err.txt))"
  [ "$ms" -lt 2000 ] || fail "SIGINT after $1 bytes of a slow pipe: took $ms ms"
  grep -q "interrupted" err.txt || fail "SIGINT message: $(cat err.txt)"
  [ "$(cat out.npy)" = keep ] || fail "SIGINT: existing output changed"
  ls -A | grep -q 'dmlbits-' && fail "SIGINT: a temporary file was left"
}
interrupted_while_reading 100000 big.npy 1
interrupted_while_reading 1500000 huge.npy 2

# ---- item 7: an empty file name ----------------------------------------------------------------
for opt in -o --time-json --explain-json --expect --emit-dxdispatch; do
  expect_status 2 not u8.npy "$opt" ''
  expect_err "an empty file name names no file"; expect_one_line
done
expect_status 2 check m.json --junit ''
expect_err "an empty file name names no file"

# ---- item 8: --explain writes every side output it can, refuses those that need a run ---------
expect_status 0 not u8.npy --explain --explain-json e.json
[ -f e.json ] && [ "$(cat e.json)" = "$out" ] || fail "--explain --explain-json: e.json is not what --explain printed"
for extra in "-o r.npy" "--time-json t.json" "--time" "--expect w8.npy"; do
  # shellcheck disable=SC2086
  expect_status 2 not u8.npy --explain $extra
  expect_err "needs a run, and --explain describes the operation without running it"
done
expect_no_file r.npy; expect_no_file t.json

# ---- item 9: expect_message beside expected -----------------------------------------------------
cat > m9.json <<'JSON'
{"cases": [{"name": "x", "op": "not", "inputs": ["u8.npy"], "expected": "w8.npy", "expect_message": "anything"}]}
JSON
expect_status 3 check m9.json
expect_err "\"expect_message\" needs \"expect_error\""

# ---- item 10: the requirement that fails is named --------------------------------------------
expect_status 3 shl u64.npy 1 -l 1_0
expect_err "shl: data type UINT64 needs DML_FEATURE_LEVEL_4_1 or later (requested 1_0)"
expect_status 3 popcount u64.npy -l 2_1
expect_err "popcount: data type UINT64 needs DML_FEATURE_LEVEL_4_1 or later (requested 2_1)"
expect_status 3 not u8.npy -l 2_1
expect_err "the operator (DML_OPERATOR_ELEMENT_WISE_BIT_NOT) needs DML_FEATURE_LEVEL_3_0"

# ---- item 11: the threads a run uses ------------------------------------------------------------
expect_status 0 not u8.npy -o r.npy --backend cpu --threads 2 -v
expect_err "1 of 2 threads (outputs under 4 MiB run on one)"
expect_status 0 not u8.npy -o r.npy --backend cpu --threads 2 --repeat 2 --time
expect_err "1 of 2 threads (outputs under 4 MiB run on one)"
expect_status 0 not u8.npy -o r.npy --threads 2 -v  # auto says what the backend it chose says
expect_err "1 of 2 threads (outputs under 4 MiB run on one)"
"$PYTHON" -c "import numpy as np; np.save('big32.npy', np.zeros(1_500_000, dtype=np.uint32))"
expect_status 0 not big32.npy -o r.npy --backend cpu --threads 2 --repeat 2 -v
expect_err ", 2 threads"
# Streamed, 6 MB, regular files in and out: one thread under 16 MiB of output (two threads
# measured slower there), with one streamed input or two, and popcount into uint8, a narrower
# output, at any size (auto says so too). 64 MiB is split in halves, each thread reading,
# computing and writing its own; into a device (written in order) one streamed input pipelines
# from 64 MiB and two stay on one thread, as with one from standard input.
expect_status 0 not big32.npy -o r.npy --threads 2 -v
expect_err "1 of 2 threads (streamed outputs under 16 MiB run on one)"
expect_status 0 and big32.npy big32.npy -o r.npy --threads 2 -v
expect_err "1 of 2 threads (streamed outputs under 16 MiB run on one)"
expect_status 0 popcount big32.npy -o r.npy --threads 2 -v
expect_err "1 of 2 threads (narrower outputs run on one)"
expect_status 0 not huge.npy -o r.npy --threads 2 -v
expect_err ", 2 threads (each reads, computes and writes half)"
expect_status 0 and huge.npy huge.npy -o r.npy --threads 2 -v
expect_err ", 2 threads (each reads, computes and writes half)"
expect_status 0 not huge.npy -o /dev/null --threads 2 -v
expect_err ", 2 threads (one reads and computes, one writes)"
expect_status 0 and huge.npy huge.npy -o /dev/null --threads 2 -v
expect_err "1 of 2 threads (two streamed inputs through a pipe or device run on one)"
expect_status 0 and huge.npy - -o r.npy --threads 2 -v < huge.npy
expect_err "1 of 2 threads (two streamed inputs through a pipe or device run on one)"
expect_status 0 not huge.npy -o r.npy --threads 1 -v
expect_err ", 1 thread)"

# ---- item 12: check reads a manifest from standard input ----------------------------------------
cat > m.json <<'JSON'
{"cases": [{"name": "x", "op": "not", "inputs": ["u8.npy"], "expected": "w8.npy"}]}
JSON
run check - < m.json
[ "$status" -eq 0 ] || fail "check - < m.json: exit $status: $err"
expect_out "1 passed, 0 failed"
expect_status 2 check - - < m.json
expect_err "standard input ('-') can be given as one manifest only"

# ---- item 14: messages --------------------------------------------------------------------------
expect_status 2 ops -l
expect_err "needs a value"; expect_one_line
expect_status 2 ops -l 9_9
expect_err "--feature-level: unknown level '9_9' (1_0 to"
expect_status 2 not u8.npy --threads abc
expect_err "--threads: 'abc' is not a thread count from 1 to 256"
expect_status 5 not $'new\nline.npy'
expect_err "'new\\nline.npy'"; expect_one_line
long=$(printf -- '--%05000d' 0)
expect_status 2 not u8.npy "$long"
expect_one_line
[ "${#err}" -lt 200 ] || fail "a 5000-character unknown option is echoed whole (${#err} characters)"
expect_err "(5002 characters)"
echo '{"dtype": "uint8", "shape": [1], "data": [1, 2]}' > j.json
expect_status 3 not j.json
expect_err "shape [1] (1 element) does not match"
expect_status 1 not u8.npy --expect bad8.npy
expect_out "3 of 4 elements differ"
"$PYTHON" -c "import numpy as np; np.save('one.npy', np.array([7], dtype=np.uint8)); np.save('one_g.npy', np.array([248], dtype=np.uint8))"
expect_status 0 not one.npy --expect one_g.npy -v
expect_err "1 element identical"

mkdir ro
expect_status 5 info ro
expect_err "dmlbits: reading 'ro': cannot read 'ro': Is a directory"
info_err=$err
expect_status 5 not ro
[ "$err" = "$info_err" ] || fail "info and not word a folder differently: '$info_err' and '$err'"

# ---- item 15: help lists help, and help help is this help ---------------------------------------
expect_status 0 --help
expect_out "help"
[[ "$out" == *"Print this help, or a command's"* ]] || fail "--help does not list help: $out"
expect_status 0 help help
top=$("$DMLBITS" --help)
[ "$out" = "$top" ] || fail "help help is not the top-level help"

# ---- item 17: no header over no rows ------------------------------------------------------------
expect_status 1 not u8.npy --expect bad8.npy --show 0
[[ "$out" != *"index"* ]] || fail "--show 0 prints a column header: $out"

run ops -l 1_0
[[ "$out" != *"INPUT TYPES"* ]] || fail "ops -l 1_0 prints a header with no rows: $out"
run ops -l 3_0
# At 3_0 no row holds a 4_1 type list: the input-types column is as wide as 3_0's widest.
"$PYTHON" - "$out" <<'PY' || fail "ops -l 3_0 is padded to 4_1's width: $out"
import sys
lines = sys.argv[1].splitlines()
header = next(l for l in lines if l.startswith("OP"))
start = header.index("INPUT TYPES"); end = header.index("OUTPUT TYPES")
widest = max(len(l[start:end].rstrip()) for l in lines[2:] if "not available" not in l)
assert end - start == max(widest, len("INPUT TYPES")) + 2, (end - start, widest)
PY

# ---- item 18: sizes DirectML cannot describe ----------------------------------------------------
"$PYTHON" -c "
import numpy as np
# An empty tensor of shape (0, 5000000000): a header and no data (NumPy cannot allocate the
# shape's strides for a real array this large on every host, so the header is written by hand).
h = \"{'descr': '|u1', 'fortran_order': False, 'shape': (0, 5000000000), }\"
h = h + ' ' * ((64 - (10 + len(h) + 1) % 64) % 64) + '\n'
open('empty.npy', 'wb').write(b'\x93NUMPY\x01\x00' + len(h).to_bytes(2, 'little') + h.encode())
assert np.load('empty.npy').shape == (0, 5000000000)
"
expect_status 4 not empty.npy --explain
expect_err "does not fit DirectML's 32-bit UINT"
expect_status 0 not empty.npy -o e_out.npy
finish
