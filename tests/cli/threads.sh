#!/usr/bin/env bash
# The CPU backend's default thread count follows the CPUs this process may run on (#38): under
# `taskset -c 0` it is one, and `devices`, `devices --json` and -v say so and why; DMLBITS_THREADS
# and --threads override it there (as asked). Expected counts follow from the CPU list given to
# taskset, by hand.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
command -v taskset > /dev/null || { echo "SKIP: no taskset"; exit 0; }
# 8 MiB of uint32: over the 4 MiB from which a run may use more than one thread.
"$PYTHON" -c "
import numpy as np
np.save('big.npy', np.arange(2 << 20, dtype=np.uint32))
np.save('not_big.npy', ~np.arange(2 << 20, dtype=np.uint32))
"

# run_on CPUS ARGS...: run with the affinity mask CPUS (taskset -c), leaving $status, $out, $err.
run_on() {
  local cpus=$1; shift
  checks=$((checks + 1))
  out=$(taskset -c "$cpus" "$DMLBITS" "$@" 2>"$WORK/stderr") && status=0 || status=$?
  err=$(cat "$WORK/stderr")
  [ "$status" -eq 0 ] || fail "taskset -c $cpus dmlbits $* exited $status; stderr: $err"
}

# ---- one CPU: one thread, said by devices and -v ---------------------------------------------
run_on 0 devices
expect_out ", 1 thread (1 CPU this process may run on; --isa"
run_on 0 devices --json
"$PYTHON" -c "
import json, sys
cpu = next(b for b in json.loads(sys.argv[1])['backends'] if b['name'] == 'cpu')
assert cpu['threads'] == 1, cpu
assert cpu['threads_reason'] == '1 CPU this process may run on', cpu
" "$out" || fail "devices --json under taskset -c 0: $out"
run_on 0 not big.npy -o o.npy -v --backend cpu
expect_err "dmlbits: 1 thread: 1 CPU this process may run on"
expect_err " 1 thread), UINT32"
cmp -s o.npy not_big.npy || fail "not big.npy on one CPU differs from NumPy's"

# ---- asked: DMLBITS_THREADS and --threads override the machine --------------------------------
DMLBITS_THREADS=3 run_on 0 devices
expect_out ", 3 threads (as asked; --isa"
DMLBITS_THREADS=3 run_on 0 not big.npy -o o.npy -v --backend cpu
expect_err "dmlbits: 3 threads: as asked"
cmp -s o.npy not_big.npy || fail "not big.npy with DMLBITS_THREADS=3 differs from NumPy's"
DMLBITS_THREADS=3 run_on 0 not big.npy -o o.npy -v --backend cpu --threads 2
expect_err "dmlbits: 2 threads: as asked"

# ---- two CPUs, where the host has them: two threads -----------------------------------------
if [ "$(nproc --all)" -ge 2 ]; then
  run_on 0,1 devices
  expect_out ", 2 threads (2 CPUs this process may run on; --isa"
  run_on 0,1 not big.npy -o o.npy -v --backend cpu
  expect_err "dmlbits: 2 threads: 2 CPUs this process may run on"
fi
finish
