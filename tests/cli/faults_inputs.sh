#!/usr/bin/env bash
# Inputs that are too big, lie about their size, or change while dmlbits reads them, through the
# binary. In every case: a clear one-line message, the documented status (3 for an input over a
# limit or shorter than its header says, 5 for a file that shrank while being read), bounded
# memory and time, no output or temporary file, and an existing output file left as it was.
source "$(dirname "$0")/lib.sh"
# wait_bg PID: waits for dmlbits started in the background with its stderr in stderr.txt, and
# leaves $status and $err as run() does.
wait_bg() {
  wait "$1" && status=0 || status=$?
  err=$(cat stderr.txt)
  checks=$((checks + 1))
}
cd "$WORK"

MiB=$((1024 * 1024))
no_temp_files() { ! ls -A "${1:-.}" | grep -q 'dmlbits-' || fail "temporary files left in ${1:-.}: $(ls -A "${1:-.}")"; }
# measure CMD...: runs CMD (standard input inherited), leaving its status in $status, its
# stderr in $err and its peak RSS in KiB in $rss. (lastpipe: `gen | measure ...` sets them too.)
# Memory bounds: 96 MiB where dmlbits needs almost nothing (an ASan build starts at about
# 45 MiB), 192 MiB where it holds up to 64 MiB of JSON or streams 8 MiB chunks; the inputs are
# 10 GiB to 1 TiB, so reading their data would exceed these by far.
shopt -s lastpipe
measure() {
  checks=$((checks + 1))
  /usr/bin/time -o rss.txt -f '%M' "$@" >stdout.txt 2>stderr.txt && status=0 || status=$?
  err=$(head -c 4000 stderr.txt)  # a broken build may print the whole input in its message
  rss=$(tail -n 1 rss.txt)
}
# untouched: the existing output "keep" is still there, and nothing else was left.
untouched() { [ "$(cat out.npy)" = keep ] || fail "$1: existing output changed"; no_temp_files; }
echo keep > out.npy

# npy_file FILE DESCR SHAPE FORTRAN DATA_BYTES: a version 1.0 header as the .npy format defines
# it (the dict padded with spaces and '\n' to a multiple of 64 bytes), followed by DATA_BYTES
# bytes (sparse zeros: no disk used), whatever the shape promises.
npy_file() {
  "$PYTHON" - "$@" <<'PY'
import sys
path, descr, shape, fortran, n = sys.argv[1], sys.argv[2], eval(sys.argv[3]), sys.argv[4] == "1", int(sys.argv[5])
d = "{'descr': '%s', 'fortran_order': %s, 'shape': %r, }" % (descr, fortran, shape)
d += " " * (-(10 + len(d) + 1) % 64) + "\n"
with open(path, "wb") as out:
    out.write(b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d.encode("ascii"))
    out.truncate(out.tell() + n)
PY
}

# ---- a 10 GiB JSON array: refused from the file's size, before anything is read ---------------
printf '[0, ' > big.json
truncate -s 10G big.json
for cmd in "not --dtype uint8 big.json -o out.npy" "info big.json" "and --dtype uint8 big.json 1 -o out.npy"; do
  # shellcheck disable=SC2086
  measure "$DMLBITS" $cmd
  [ "$status" -eq 3 ] || fail "dmlbits $cmd: exit $status, expected 3 ($err)"
  expect_err "dmlbits: reading 'big.json': JSON input is limited to 64 MiB, and this file is 10 GiB: use .npy for larger tensors"
  expect_one_line
  expect_rss_within "$rss" 4096 "dmlbits $cmd: a refused 10 GiB JSON file"
done
untouched "10 GiB JSON"

# ... and from standard input as soon as it passes the bound (1 GiB from a generator: a bound
# that failed would be seen without the test exhausting memory).
{ printf '['; yes '0,' | head -c $((1024 * MiB)); } | measure "$DMLBITS" not --dtype uint8 - -o out.npy
[ "$status" -eq 3 ] || fail "JSON on stdin: exit $status, expected 3 ($err)"
expect_err "dmlbits: reading standard input: JSON input is limited to 64 MiB, and standard input has more: use .npy for larger tensors"
expect_one_line
# The text up to the bound, and no copy of it: 64 MiB and one read of 64 KiB.
expect_rss_within "$rss" $((64 * 1024 + 64)) "JSON on stdin (64 MiB of text)"
untouched "JSON on stdin"

# A large file that is neither .npy nor JSON says so, not that JSON is limited.
truncate -s 100M zeros.bin
expect_status 3 info zeros.bin
expect_err "unrecognised format"; expect_one_line

# ---- the value bound: the 8388609th value (data[8388608]) is refused as it is met ------------
"$PYTHON" -c "open('over_bound.json', 'w').write('[' + '1,' * (1 << 23) + '1]')"
expect_status 3 not --dtype uint8 over_bound.json -o out.npy
expect_err "dmlbits: reading 'over_bound.json': data[8388608]: JSON tensors are limited to 8388608 values: use .npy for larger tensors"
expect_one_line
untouched "too many JSON values"

# ---- JSON nested 100000 deep, from a pipe: refused at the ninth level, in little memory --------
"$PYTHON" -c "print('[' * 100000 + ']' * 100000)" | measure "$DMLBITS" not --dtype uint8 - -o out.npy
[ "$status" -eq 3 ] || fail "100000-deep JSON: exit $status, expected 3 ($err)"
expect_err "more than 8 nested levels"; expect_one_line
expect_rss_within "$rss" 1024 "100000-deep JSON (200 KB of text)"
untouched "deep JSON"

# ---- headers that claim more data than the file has (1 TiB) -----------------------------------
# Little-endian C order streams; big-endian and Fortran order are read whole: every path must
# compare the claim with the file's size before it reads or allocates anything.
for spec in "|u1 (1<<40,) 0" ">u4 (1<<38,) 0" "<u2 (1<<20,1<<19) 1"; do
  read -r descr shape fortran <<<"$spec"
  npy_file huge.npy "$descr" "$shape" "$fortran" 1000
  for cmd in "not huge.npy -o out.npy" "info huge.npy" "not huge.npy --format json"; do
    # shellcheck disable=SC2086
    measure "$DMLBITS" $cmd
    [ "$status" -eq 3 ] || fail "dmlbits $cmd ($spec): exit $status, expected 3 ($err)"
    expect_err "dmlbits: reading 'huge.npy': truncated: expected "
    expect_err " bytes of data, found 1000"
    expect_one_line
    expect_rss_within "$rss" 1024 "dmlbits $cmd ($spec)"
  done
done
# The same claim from a pipe is found short at its end.
npy_file huge.npy '|u1' '(1<<40,)' 0 100000
measure "$DMLBITS" not - -o out.npy < <(cat huge.npy)
[ "$status" -eq 3 ] || fail "huge claim on a pipe: exit $status, expected 3 ($err)"
expect_err "dmlbits: reading standard input: truncated: expected 1099511627776 bytes of data, found 100000"
expect_rss_within "$rss" 4096 "huge claim on a pipe (100000 bytes)"
untouched "huge shape claims"

# ---- standard input redirected from a file that cannot stream is read once, from its offset ---
# (It used to be read from the start again after its header, doubling the first bytes.)
"$PYTHON" -c "
import numpy as np
np.save('f.npy', np.asfortranarray(np.arange(6, dtype=np.uint8).reshape(2, 3)))
np.save('b.npy', np.arange(3, dtype='>u2'))"
printf '[1, 2]' > s.json
"$DMLBITS" not - -o nf.npy < f.npy || fail "Fortran-order .npy redirected to stdin: exit $?"
"$DMLBITS" not - -o nb.npy < b.npy || fail "big-endian .npy redirected to stdin: exit $?"
"$DMLBITS" not --dtype uint8 - -o ns.npy < s.json || fail "JSON redirected to stdin: exit $?"
"$PYTHON" -c "
import numpy as np
assert (np.load('nf.npy') == ~np.load('f.npy')).all() and np.load('nf.npy').shape == (2, 3)
assert (np.load('nb.npy') == ~np.load('b.npy')).all()
assert np.load('ns.npy').tolist() == [254, 253]" || fail "stdin redirected from a file: wrong result"
checks=$((checks + 1))

# ---- `info` reads the header only: a 16 GiB big-endian file costs no more than a small one ----
npy_file be.npy '>u4' '(1<<32,)' 0 $((1 << 34))
measure "$DMLBITS" info be.npy
[ "$status" -eq 0 ] || fail "info of a 16 GiB file: exit $status ($err)"
expect_rss_within "$rss" 1024 "info of a 16 GiB file"

# ---- an input file truncated while a streamed run reads it ------------------------------------
# Deterministic: the output is a FIFO the test reads, so dmlbits is blocked writing its first
# chunk when the input is cut; 256 MiB is far more than it can have read ahead by then.
npy_file stream.npy '|u1' "($((256 * MiB)),)" 0 $((256 * MiB))
mkfifo fifo
"$DMLBITS" not stream.npy -o fifo --quiet 2>stderr.txt &
pid=$!
exec 3<fifo
head -c 4096 <&3 > /dev/null  # dmlbits has opened its input and written to the FIFO
truncate -s 1000000 stream.npy
cat <&3 > /dev/null
exec 3<&-
wait_bg "$pid"
[ "$status" -eq 5 ] || fail "input truncated during a stream: exit $status, expected 5 ($err)"
expect_err "dmlbits: reading 'stream.npy': file shrank while reading: expected 268435456 bytes of data, found "
expect_one_line

# The same into a regular file: the run is stopped once its temporary output exists, the input
# cut, the run resumed. 8 GiB cannot be streamed in the moment between the two.
npy_file stream.npy '|u1' "($((8192 * MiB)),)" 0 $((8192 * MiB))
"$DMLBITS" not stream.npy -o out.npy --quiet 2>stderr.txt &
pid=$!
for _ in $(seq 2000); do writing_output "$pid" && break; sleep 0.005; done
kill -STOP "$pid"
writing_output "$pid" || fail "no output under way appeared while streaming"
truncate -s 1000000 stream.npy
kill -CONT "$pid"
wait_bg "$pid"
[ "$status" -eq 5 ] || fail "input truncated during a stream to a file: exit $status, expected 5 ($err)"
expect_err "dmlbits: reading 'stream.npy': file shrank while reading"
expect_one_line
untouched "input truncated during a stream"

# An input deleted while it is read is read to its end (its data lives until it is closed).
npy_file gone.npy '|u1' "($((64 * MiB)),)" 0 $((64 * MiB))
"$DMLBITS" not gone.npy -o fifo --quiet 2>stderr.txt &
pid=$!
exec 3<fifo
head -c 4096 <&3 > /dev/null
rm gone.npy
rest=$("$PYTHON" -c "import sys; d = sys.stdin.buffer.read(); print(len(d), d.count(b'\xff'))" <&3)
exec 3<&-
wait_bg "$pid"
[ "$status" -eq 0 ] || fail "input deleted while read: exit $status ($err)"
# The rest is all 0xff: 64 MiB of data less the 4096 bytes already taken, 128 of them the header.
want=$((64 * MiB - 4096 + 128))
[ "$rest" = "$want $want" ] || fail "input deleted while read: the rest of the output was: $rest"

# ---- an input truncated while it is read whole (big-endian data is converted in memory) ------
# The run is stopped once it has read 1 MiB of the file's 2 GiB (so the read is under way and far
# from done), the file cut, the run resumed: a short read is an error, not SIGBUS. Fortran order
# too: it is read into a scratch buffer a few slices at a time, and transposed from there.
read_bytes() { local k v; while read -r k v; do [ "$k" = "rchar:" ] && echo "$v" && return; done < "/proc/$pid/io"; echo 0; }
for spec in ">u4 ($((512 * MiB)),) 0" "<u2 (32768,32768) 1"; do
  read -r descr shape fortran <<<"$spec"
  npy_file whole.npy "$descr" "$shape" "$fortran" $((2048 * MiB))
  "$DMLBITS" not whole.npy -o out.npy --quiet 2>stderr.txt &
  pid=$!
  for _ in $(seq 20000); do [ "$(read_bytes)" -gt "$MiB" ] && break; done
  kill -STOP "$pid"
  got=$(read_bytes)
  truncate -s 1000000 whole.npy
  kill -CONT "$pid"
  wait_bg "$pid"
  if [ "$got" -gt "$MiB" ] && [ "$got" -lt $((2000 * MiB)) ]; then
    [ "$status" -eq 5 ] || fail "input truncated during a whole read ($spec): exit $status, expected 5 ($err)"
    expect_err "dmlbits: reading 'whole.npy': file shrank while reading: expected 2147483776 bytes, found "
    expect_one_line
  else
    # Not a failure of dmlbits: the stop did not land inside the read. It must not crash anyway.
    echo "note: the stop landed after $got bytes; the whole-read truncation case ($spec) did not run" >&2
    [ "$status" -lt 128 ] || fail "input truncated during a whole read ($spec): killed by signal $((status - 128))"
  fi
  untouched "input truncated during a whole read ($spec)"
done
finish
