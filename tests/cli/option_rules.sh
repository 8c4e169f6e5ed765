#!/usr/bin/env bash
# The rules of an operation request hold alike for every face and backend (#24; #23 items 6 and
# 16): the environment variables that stand for an option (DMLBITS_ISA, DMLBITS_THREADS) are
# checked wherever the option would be, whatever the backend, and the option overrides its
# variable; the operators and check refuse the same things; every command that prints JSON takes
# both --json and --format json. Expected values are hand-computed.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
"$PYTHON" -c "
import numpy as np
np.save('x.npy', np.array([0, 1, 2, 3], dtype=np.uint8))
np.save('not_x.npy', np.array([255, 254, 253, 252], dtype=np.uint8))
"
cat > m.json <<'JSON'
{"cases": [{"name": "ref", "op": "not", "inputs": ["x.npy"], "expected": "not_x.npy", "backend": "cpu-reference"}]}
JSON

# ---- DMLBITS_THREADS and DMLBITS_ISA: one rule for every backend and command ----------------
# A malformed value is status 2 before anything is read, on the reference backend as on cpu
# (it was ignored there, and on d3d12), for the operators as for check.
for backend in cpu cpu-reference auto; do
  DMLBITS_THREADS=abc expect_status 2 not x.npy -o o.npy --backend "$backend"
  expect_err "DMLBITS_THREADS: 'abc' is not a thread count from 1 to 256"; expect_one_line
  expect_no_file o.npy
  DMLBITS_ISA=bogus expect_status 2 not x.npy -o o.npy --backend "$backend"
  expect_err "DMLBITS_ISA: unknown instruction set 'bogus'"; expect_one_line
  expect_no_file o.npy
done
DMLBITS_THREADS=abc expect_status 2 check m.json
expect_err "DMLBITS_THREADS"
DMLBITS_ISA=bogus expect_status 2 check m.json
expect_err "DMLBITS_ISA"
# Checked before the operands are read: a missing input is not what is reported.
DMLBITS_ISA=bogus expect_status 2 not missing.npy --backend cpu-reference
expect_err "DMLBITS_ISA"
# The option overrides its variable, which is then not read: for the operators as for check.
DMLBITS_ISA=bogus expect_status 0 not x.npy -o o.npy --isa scalar
cmp -s o.npy not_x.npy || fail "not x.npy --isa scalar differs from the hand-computed result"
DMLBITS_THREADS=abc expect_status 0 not x.npy -o o.npy --threads 1
cat > cpu.json <<'JSON'
{"cases": [{"name": "cpu", "op": "not", "inputs": ["x.npy"], "expected": "not_x.npy"}]}
JSON
DMLBITS_ISA=bogus expect_status 0 check cpu.json --isa scalar
expect_out "1 passed, 0 failed"
# Good values pass everywhere.
DMLBITS_THREADS=1 DMLBITS_ISA=scalar expect_status 0 not x.npy -o o.npy --backend cpu-reference
DMLBITS_THREADS=1 DMLBITS_ISA=scalar expect_status 0 check m.json

# ---- option words: the library refuses an option as data, the command line words it ----------
# (lib/include/dmlbits/error.hpp): its flags, status 2; a manifest's own keys quoted,
# status 3 (tests/unit/check_test.cpp). Hand-written expected messages.
expect_status 2 not x.npy --repeat 0
expect_err "dmlbits: not: --repeat must be at least 1 and --warmup at least 0; see dmlbits not --help"; expect_one_line
expect_status 2 not x.npy --warmup -1
expect_err "--repeat must be at least 1 and --warmup at least 0"; expect_one_line
cp x.npy y.npy
expect_status 2 not y.npy --in-place --repeat 2
expect_err "dmlbits: not: --in-place runs once: it cannot be combined with --repeat or --warmup; see dmlbits not --help"
expect_status 2 not y.npy --in-place -o o2.npy
expect_err "dmlbits: not: --in-place and -o cannot be combined; see dmlbits not --help"; expect_one_line
[ ! -e o2.npy ] || fail "--in-place with -o wrote o2.npy"
expect_status 2 popcount x.npy --in-place
expect_err "--in-place is not offered: DirectML does not let BIT_COUNT's output alias its input"; expect_one_line
expect_status 2 not x.npy --threads 2 --backend d3d12
expect_err "the d3d12 backend has no choice of CPU threads (--threads)"; expect_one_line
expect_status 2 not x.npy --adapter 0 --backend cpu
expect_err "--adapter applies to the d3d12, directml and auto backends, not cpu"; expect_one_line
expect_status 2 not x.npy --isa avx2 --backend cpu-reference
expect_err "the cpu-reference backend has no choice of instruction set (asked for 'avx2')"; expect_one_line
# Each kind's parser, as CLI11 reads the option: the flag, the value, the table's names.
expect_status 2 not x.npy --backend gpu
expect_err "--backend: unknown backend 'gpu' (available: auto, cpu, d3d12, directml, cpu-reference)"; expect_one_line
expect_status 2 not x.npy --dtype uint7
expect_err "--dtype: unknown data type 'uint7' (known: uint8|u1|UINT8,"; expect_one_line
expect_status 2 popcount x.npy --out-dtype u9
expect_err "--out-dtype: unknown data type 'u9' (known:"; expect_one_line
expect_status 2 not x.npy -l 4_2
expect_err "--feature-level: unknown level '4_2' (1_0 to 6_4, also written 4.1 or DML_FEATURE_LEVEL_4_1)"; expect_one_line
expect_status 2 shl x.npy 1 --shift-overflow clamp
expect_err "--shift-overflow: unknown mode 'clamp' ('directml', 'zero' or 'wrap')"; expect_one_line
expect_status 2 not x.npy --isa neon
expect_err "--isa: unknown instruction set 'neon' (known: scalar, avx2, avx512)"; expect_one_line
expect_status 2 not x.npy --threads 0
expect_err "--threads: '0' is not a thread count from 1 to 256"; expect_one_line
expect_status 2 check m.json --backend gpu
expect_err "dmlbits: check: --backend: unknown backend 'gpu'"; expect_one_line
expect_status 2 check m.json --isa neon
expect_err "dmlbits: check: --isa: unknown instruction set 'neon'"; expect_one_line
expect_status 3 and 1 2
expect_err "dmlbits: operand A (literal '1'): the data type is unknown: no other operand names one; use --dtype"; expect_one_line
cat > bad.json <<'JSON'
{"cases": [{"name": "c", "op": "not", "inputs": ["x.npy"], "expected": "not_x.npy", "feature_level": "4_2"}]}
JSON
expect_status 3 check bad.json
expect_err "case 'c': \"feature_level\": unknown feature level \"4_2\""; expect_one_line

# ---- --json and --format json, on every command that prints JSON -----------------------------
expect_status 0 not x.npy --json
expect_out '"dtype": "uint8"'
expect_status 0 not x.npy -o - --json
expect_out '"dtype": "uint8"'
expect_status 2 not x.npy -o o.npy --json --format npy
expect_err "--json and --format npy cannot be combined"; expect_one_line
for cmd in "ops" "info x.npy" "devices"; do
  # shellcheck disable=SC2086
  expect_status 0 $cmd --format json
  json_out=$out
  # shellcheck disable=SC2086
  expect_status 0 $cmd --json
  # devices reports timings, which differ from run to run: compare the keys there.
  if [ "$cmd" = devices ]; then
    "$PYTHON" -c "import json,sys; a,b=json.loads(sys.argv[1]),json.loads(sys.argv[2]); sys.exit(sorted(a)!=sorted(b))" \
      "$out" "$json_out" || fail "devices: --json and --format json differ"
  else
    [ "$out" = "$json_out" ] || fail "$cmd: --json and --format json differ"
  fi
  # shellcheck disable=SC2086
  expect_status 0 $cmd --format text
  [ "$out" != "$json_out" ] || fail "$cmd --format text printed JSON"
  # shellcheck disable=SC2086
  expect_status 2 $cmd --json --format text
  expect_err "--json and --format text cannot be combined"
done
finish
