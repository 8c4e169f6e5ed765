#!/usr/bin/env bash
# Streamed d3d12 runs through the transfer heaps (Backend::run_staged, #36 item 4), through the
# binary, against NumPy: two streamed inputs across pieces and the slots' rotation, a narrower
# output, a broadcast literal, no element and one, standard input to standard output, in place,
# and a truncated pipe that leaves no output file. `--time` names the streamed phase, so a run
# that fell back to the stream layer's own chunks fails here. On a software adapter (lavapipe)
# a piece is 512 KiB (kSoftwareStreamPieceBytes), so the sizes below cross several pieces and
# slots while staying small; smaller pieces on every operator and dtype are the unit tests'
# (d3d12_backend_test.cpp, staged runs).
#
# Needs an adapter (lavapipe is one): skipped (77) without one, unless DMLBITS_REQUIRE_D3D12=1.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"

need_d3d12_adapter

"$P" - <<'PY'
import numpy as np
rng = np.random.default_rng(36)
piece = 512 << 10  # bytes of the wider element per piece on a software adapter
# xor uint32: three pieces and a tail, then a fourth and fifth through the first slots again
n = 5 * piece // 4 + 3
a = rng.integers(0, 2**32, size=n, dtype=np.uint32); b = rng.integers(0, 2**32, size=n, dtype=np.uint32)
np.save("a32.npy", a); np.save("b32.npy", b); np.save("want_xor.npy", a ^ b)
np.save("want_and_stdin.npy", a & b)
# popcount uint64 into uint8: pieces counted by the input, one piece and one element
n = piece // 8 + 1
c = rng.integers(0, 2**63, size=n, dtype=np.uint64) * 3
np.save("c64.npy", c)
np.save("want_pop.npy", np.array([bin(int(x)).count("1") for x in c], dtype=np.uint8))
# shl uint16 by a literal (a broadcast operand), 2-d, three pieces and a half
d = rng.integers(0, 2**16, size=(3 * piece // 2 + 7, 2), dtype=np.uint16)
np.save("d16.npy", d); np.save("want_shl.npy", (d.astype(np.uint32) << 5).astype(np.uint16))
for n, name in ((0, "e0"), (1, "e1")):
    e = rng.integers(0, 256, size=n, dtype=np.uint8)
    np.save(f"{name}.npy", e); np.save(f"want_not_{name}.npy", ~e)
# in place: or of uint8 over four pieces
f = rng.integers(0, 256, size=4 * piece + 1, dtype=np.uint8); g = rng.integers(0, 256, size=f.size, dtype=np.uint8)
np.save("f8.npy", f); np.save("g8.npy", g); np.save("want_or.npy", f | g)
PY

run xor a32.npy b32.npy -o out_xor.npy --backend d3d12 --time
[ "$status" -eq 0 ] || fail "xor on d3d12 exited $status: $err"
cmp -s out_xor.npy want_xor.npy || fail "streamed xor uint32 on d3d12 differs from NumPy"
[[ "$err" == *"streamed "* ]] || fail "a file-to-file d3d12 run did not stream through the heaps: $err"

expect_status 0 popcount c64.npy -o out_pop.npy --backend d3d12
cmp -s out_pop.npy want_pop.npy || fail "streamed popcount uint64 into uint8 on d3d12 differs from NumPy"

expect_status 0 shl d16.npy 5 -o out_shl.npy --backend d3d12 --shift-overflow wrap
cmp -s out_shl.npy want_shl.npy || fail "streamed shl uint16 by a literal on d3d12 differs from NumPy"

for e in e0 e1; do
  expect_status 0 not "$e.npy" -o "out_not_$e.npy" --backend d3d12
  cmp -s "out_not_$e.npy" "want_not_$e.npy" || fail "not of $e on d3d12 differs from NumPy"
done

# Standard input to standard output: read and written in order.
"$DMLBITS" and - b32.npy -o - --backend d3d12 --time < a32.npy > out_stdin.npy 2> stdin_err.txt ||
  fail "and from standard input on d3d12 failed: $(cat stdin_err.txt)"
cmp -s out_stdin.npy want_and_stdin.npy || fail "and from standard input to standard output on d3d12 differs from NumPy"
grep -q "streamed " stdin_err.txt || fail "a pipe-to-pipe d3d12 run did not stream through the heaps: $(cat stdin_err.txt)"

expect_status 0 or f8.npy g8.npy --in-place --backend d3d12
cmp -s f8.npy want_or.npy || fail "or --in-place on d3d12 differs from NumPy"

# A pipe that ends early, two pieces into the run (a32.npy holds five): an error, and no
# output file.
head -c $(( (1 << 20) + 128 )) a32.npy > short.bin
cat short.bin | "$DMLBITS" not - -o out_short.npy --backend d3d12 2> short_err.txt && fail "a truncated pipe on d3d12 succeeded"
grep -q "truncated" short_err.txt || fail "a truncated pipe on d3d12 did not say so: $(cat short_err.txt)"
expect_no_file out_short.npy

finish
