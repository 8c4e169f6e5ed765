#!/usr/bin/env bash
# Streaming and faults through the binary: memory that does not grow with the tensor, standard
# input and output streams, SIGINT, a closed pipe, a full disk, missing and read-only folders.
# In every failure: a clear message, a non-zero exit, no partial output, existing files intact.
# Inputs that are too big, claim more than they hold, or change while read: faults_inputs.sh.
source "$(dirname "$0")/lib.sh"
cd "$WORK"

# npy_header DTYPE_DESCR N: a v1.0 header for a 1-d array of N elements, as NumPy writes it.
npy_sparse() {  # FILE DESCR N ITEMSIZE: a sparse all-zero .npy of N elements
  "$PYTHON" - "$@" <<'PY'
import sys, numpy.lib.format as f, os
path, descr, n, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with open(path, "wb") as out:
    f.write_array_header_1_0(out, {"descr": descr, "fortran_order": False, "shape": (n,)})
    out.truncate(out.tell() + n * size)
PY
}
no_temp_files() { ! ls -A "${1:-.}" | grep -q 'dmlbits-' || fail "temporary files left in ${1:-.}: $(ls -A "${1:-.}")"; }

# A 2 GiB input (sparse: no disk used) streams with bounded memory.
big=$((2 * 1024 * 1024 * 1024))
npy_sparse big.npy '|u1' "$big" 1
# Four chunks in flight, each 512 KiB of input and of output: 4 MiB.
expect_rss_within "$(peak_rss_kib "$DMLBITS" not big.npy -o /dev/null --quiet)" 4096 "a 2 GiB stream"
# The streamed result is right at the end too (not of zeros is 0xff).
tail_bytes=$("$DMLBITS" not big.npy -o - --quiet | tail -c 4096 | od -An -tx1 -v | tr -s ' \n' '\n' | sort -u | tr -d '\n')
[ "$tail_bytes" = "ff" ] || fail "last 4096 bytes of not(zeros) are not all 0xff: $tail_bytes"
# Broadcast operands (a literal) and uint32 popcount stream too.
npy_sparse big32.npy '<u4' $((big / 4)) 4
expect_rss_within "$(peak_rss_kib "$DMLBITS" xor big32.npy 0xffffffff -o /dev/null)" 4096 "a 2 GiB xor with a literal"

# Standard input and output stream: a two-stage pipeline gives back the input.
"$PYTHON" -c "
import numpy as np
np.save('r.npy', np.random.default_rng(7).integers(0, 2**32, size=3_000_001, dtype=np.uint32))"
"$DMLBITS" not - -o - < r.npy | "$DMLBITS" not - -o back.npy || fail "stdin/stdout pipeline failed"
"$PYTHON" -c "import numpy as np; assert (np.load('back.npy') == np.load('r.npy')).all()" || fail "pipeline changed data"
cat r.npy | "$DMLBITS" popcount - -o pc.npy --out-dtype uint32 || fail "popcount from a pipe failed"
"$PYTHON" -c "
import numpy as np
a = np.load('r.npy'); p = np.load('pc.npy')
assert (p == np.unpackbits(a.view(np.uint8)).reshape(-1, 32).sum(1)).all()" || fail "popcount from a pipe is wrong"
# A truncated pipe is an error, not a short output.
head -c 1000000 r.npy | "$DMLBITS" not - -o cut.npy 2>err.txt && fail "truncated stdin accepted"
grep -q "truncated" err.txt || fail "truncated stdin message: $(cat err.txt)"
expect_no_file cut.npy

# SIGINT during a long run: exit 130, no output, no temporary file; an existing output intact.
echo keep > out.npy
# The signal is sent once the output being written exists (a fixed delay could outlast the whole
# run on a fast machine), so the run is under way and far from done (2 GiB): writing_output.
"$DMLBITS" not big.npy -o out.npy --quiet 2>err.txt &
pid=$!
for _ in $(seq 2000); do writing_output "$pid" && break; sleep 0.005; done
kill -INT "$pid"
wait "$pid" && st=0 || st=$?
[ "$st" -eq 130 ] || fail "SIGINT: exit $st, expected 130 ($(cat err.txt))"
grep -q "interrupted" err.txt || fail "SIGINT message: $(cat err.txt)"
[ "$(cat out.npy)" = keep ] || fail "SIGINT: existing output changed"
no_temp_files
# The same with two streamed inputs, whose chunks two threads share in halves (each reading,
# computing and writing its own at their offsets): both stop, one message, nothing left.
"$DMLBITS" and big.npy big.npy -o out.npy -v 2>err.txt &
pid=$!
for _ in $(seq 2000); do writing_output "$pid" && break; sleep 0.005; done
kill -INT "$pid"
wait "$pid" && st=0 || st=$?
[ "$st" -eq 130 ] || fail "SIGINT during halves: exit $st, expected 130 ($(cat err.txt))"
if [ "$(nproc)" -ge 2 ]; then
  grep -q "2 threads (each reads, computes and writes half)" err.txt || fail "SIGINT during halves: not halves: $(cat err.txt)"
fi
[ "$(grep -c "interrupted" err.txt)" -eq 1 ] || fail "SIGINT during halves message: $(cat err.txt)"
[ "$(cat out.npy)" = keep ] || fail "SIGINT during halves: existing output changed"
no_temp_files

# Halves hold two threads' chunk buffers, not the tensor: 64 MiB of two streamed inputs into a
# new file (its output all zeros, as long as its input).
npy_sparse h64.npy '<u4' $((16 * 1024 * 1024)) 4
expect_rss_within "$(peak_rss_kib "$DMLBITS" and h64.npy h64.npy -o h.npy)" 4096 "a 64 MiB and in halves"
"$PYTHON" -c "
import numpy as np
h = np.load('h.npy', mmap_mode='r')
assert h.shape == (16 << 20,) and h.dtype == np.uint32 and not h.any()" || fail "and of zeros in halves is not zeros"
rm -f h.npy h64.npy

# The progress line: on a terminal's standard error for a run over a second (the input arrives
# through a pipe, its second part after 1.2 s), ending at 100% and erased at the end; not with
# --quiet, nor when standard error is not a terminal. script(1) provides the terminal.
"$PYTHON" -c "import numpy as np; np.save('r8.npy', np.arange(6_000_000, dtype=np.uint64).astype(np.uint8))"
slow_not() {  # ARGS...: not of r8.npy fed slowly, on a terminal; prints what the terminal got
  script -q -e -c "sh -c '(head -c 1000000 r8.npy; sleep 1.2; tail -c +1000001 r8.npy) | \"$DMLBITS\" not - -o slow.npy $*'" /dev/null
}
if command -v script > /dev/null; then
  tty_text=$(slow_not) || fail "slow run on a terminal failed: $tty_text"
  [[ "$tty_text" == *"dmlbits: not 100%"* && "$tty_text" == *$'\r\033[K'* ]] ||
    fail "no progress line ending at 100% and erased: $(printf '%s' "$tty_text" | od -c | tail -4)"
  "$PYTHON" -c "import numpy as np; assert (np.load('slow.npy') == ~np.load('r8.npy')).all()" || fail "slow run result"
  tty_text=$(slow_not --quiet) || fail "slow --quiet run failed"
  [[ "$tty_text" != *"%"* ]] || fail "--quiet still shows progress: $tty_text"
  tty_text=$(slow_not '2> err_file.txt') || fail "slow run with stderr to a file failed"
  [[ "$tty_text" != *"%"* ]] || fail "progress shown on a non-terminal"
else
  fail "script(1) (Debian's bsdutils) is needed for the progress-line check"
fi

# Replacing an existing output (the names are exchanged, then the old file removed): the name
# holds the new file, a hard link to the old one keeps the old data (a new file, not an in-place
# rewrite), a symbolic link is replaced by the file and its target left alone, as with sed -i.
"$DMLBITS" not r.npy -o old.npy || fail "not r.npy failed"
cp old.npy out.npy && ln out.npy old_link.npy
echo target > target.txt && ln -s target.txt link.npy
"$DMLBITS" not old.npy -o out.npy && "$DMLBITS" not old.npy -o link.npy || fail "replacing outputs failed"
cmp -s out.npy r.npy || fail "replaced output does not hold the new result"
cmp -s old_link.npy old.npy || fail "a hard link to the replaced output changed"
[ -f link.npy ] && [ ! -L link.npy ] && cmp -s link.npy r.npy || fail "a symbolic link output was not replaced by the file"
[ "$(cat target.txt)" = target ] || fail "the target of a symbolic link output changed"
no_temp_files
# A folder in the output's place is refused, and stays.
mkdir out_dir.npy
expect_status 5 not r.npy -o out_dir.npy
expect_one_line
[ -d out_dir.npy ] || fail "a folder named as the output was replaced"
no_temp_files

# Standard output closed early (`| head`): the reader's choice, not an error: status 141, as for
# a tool that SIGPIPE ends, and nothing on standard error (broken_pipe.sh checks every command).
set +e
"$DMLBITS" not big.npy -o - --quiet 2>err.txt | head -c 10 > /dev/null
st=${PIPESTATUS[0]}
[ "$st" -eq 141 ] || fail "closed pipe: exit $st, expected 141 ($(cat err.txt))"
[ ! -s err.txt ] || fail "closed pipe printed: $(cat err.txt)"

# A full device.
expect_status 5 not r.npy -o /dev/full
expect_err "No space left on device"; expect_one_line
# A folder that does not exist.
expect_status 5 not r.npy -o no/such/dir/out.npy
expect_err "no/such/dir"; expect_one_line
# A small full filesystem and a read-only one (tmpfs mounts need privileges; say when skipped).
mkdir small ro
if mount -t tmpfs -o size=1m tmpfs small 2>/dev/null; then
  echo keep > small/out.npy
  expect_status 5 not r.npy -o small/out.npy
  expect_err "No space left on device"
  [ "$(cat small/out.npy)" = keep ] || fail "full disk: existing output changed"
  no_temp_files small
  umount small
else
  echo "note: cannot mount a tmpfs here; the small-filesystem case did not run" >&2
fi
# (Mounted writable first so that an existing output can be put there, then made read-only.)
if mount -t tmpfs -o size=1m tmpfs ro 2>/dev/null; then
  echo keep > ro/out.npy
  if mount -o remount,ro ro 2>/dev/null; then
    expect_status 5 not r.npy -o ro/out.npy
    expect_err "Read-only file system"; expect_one_line
    [ "$(cat ro/out.npy)" = keep ] || fail "read-only folder: existing output changed"
  else
    echo "note: cannot remount a tmpfs read-only here; the read-only case did not run" >&2
  fi
  umount ro
else
  echo "note: cannot mount a read-only tmpfs here; the read-only case did not run" >&2
fi

# A failed streamed run (bad second operand found late) leaves no output.
"$PYTHON" -c "
import numpy as np
np.save('x.npy', np.zeros(10, dtype=np.uint8)); np.save('y.npy', np.zeros(10, dtype=np.uint16))"
expect_status 3 and x.npy y.npy -o z.npy
expect_no_file z.npy
no_temp_files
finish
