#!/usr/bin/env bash
# No Vulkan call after a driver's exit handler (#36): every dmlbits process that used the d3d12
# backend on an NVIDIA H100 died with SIGSEGV after its work, because its D3D12 devices (and
# under vkd3d the Vulkan device and instance) were released by a static destructor at exit,
# after the driver's own exit handler. The exit_guard layer (tests/tools/exit_guard_layer.cpp)
# behaves as such a driver does on lavapipe: it registers an exit handler at each
# vkCreateInstance and aborts, naming the call, on any Vulkan call after one ran. Under it: the
# CLI's d3d12 runs, `devices`, `check --backend d3d12` and the Python module's d3d12 calls must
# exit 0, and must have destroyed their devices before exit (the layer's log).
#
# Needs the layer (built with the tests where vulkan/vulkan.h is) and a D3D12 adapter (lavapipe
# is one): skipped (77) without, unless DMLBITS_REQUIRE_D3D12=1.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"

skip() {
  if [ "${DMLBITS_REQUIRE_D3D12:-}" = 1 ]; then
    echo "FAIL: DMLBITS_REQUIRE_D3D12=1 but $1" >&2
    exit 1
  fi
  echo "skipped: $1" >&2
  exit 77
}
[ -n "${DMLBITS_EXIT_GUARD_LAYER_DIR:-}" ] && [ -n "${DMLBITS_EXIT_GUARD_PROBE:-}" ] || skip "the exit_guard layer was not built"
devices=$("$DMLBITS" devices --json) || { echo "FAIL: dmlbits devices --json failed" >&2; exit 1; }
available=$("$P" -c "import json,sys; print(int(json.loads(sys.argv[1])['d3d12']['available']))" "$devices")
[ "$available" = 1 ] || skip "the d3d12 backend is unavailable"

export VK_LAYER_PATH="$DMLBITS_EXIT_GUARD_LAYER_DIR"
export VK_INSTANCE_LAYERS=VK_LAYER_DMLBITS_exit_guard
export EXIT_GUARD_LOG="$WORK/layer.log"

# guarded WHAT: the last run (run/expect_status) went through the layer, created a device and
# destroyed it before exit, and the layer said nothing.
guarded() {
  checks=$((checks + 4))
  [[ "$err" != *"exit_guard layer"* ]] || fail "$1: $err"
  grep -qx vkCreateDevice "$EXIT_GUARD_LOG" 2>/dev/null || fail "$1: the layer saw no device created (not loaded?)"
  grep -qx vkDestroyDevice "$EXIT_GUARD_LOG" 2>/dev/null || fail "$1: the device was not destroyed before exit"
  ! grep -q "after exit" "$EXIT_GUARD_LOG" 2>/dev/null || fail "$1: $(grep "after exit" "$EXIT_GUARD_LOG")"
  rm -f "$EXIT_GUARD_LOG"
}

# ---- the layer itself: an instance released by an exit handler aborts, one released in main not
checks=$((checks + 1))
"$DMLBITS_EXIT_GUARD_PROBE" late > /dev/null 2> probe.err && status=0 || status=$?
[ "$status" = 77 ] && skip "no Vulkan driver for the probe"
[ "$status" = 134 ] && grep -q "exit_guard layer: vkDestroyInstance called after" probe.err ||
  fail "the layer let an instance be destroyed at exit: status $status, $(cat probe.err)"
checks=$((checks + 1))
"$DMLBITS_EXIT_GUARD_PROBE" early > /dev/null 2> probe.err || fail "probe early: $(cat probe.err)"
rm -f "$EXIT_GUARD_LOG"

# ---- the CLI -----------------------------------------------------------------------------------
"$P" - <<'PY'
import numpy as np
rng = np.random.default_rng(36)
a = rng.integers(0, 2**32, size=4099, dtype=np.uint32)
b = rng.integers(0, 40, size=4099, dtype=np.uint32)
np.save("a.npy", a); np.save("b.npy", b)
np.save("pc.npy", np.bitwise_count(a).astype(np.uint8) if hasattr(np, "bitwise_count")
        else np.array([bin(int(x)).count("1") for x in a], dtype=np.uint8))
np.save("xor.npy", a ^ b)
PY
expect_status 0 devices
expect_out "D3D feature level"
guarded "devices"
expect_status 0 devices --json
guarded "devices --json"
expect_status 0 popcount a.npy -o pc_out.npy --backend d3d12 -v --time
cmp -s pc_out.npy pc.npy || fail "popcount on d3d12 under the layer differs from NumPy"
guarded "popcount --backend d3d12"
expect_status 0 xor a.npy b.npy -o xor_out.npy --backend d3d12
cmp -s xor_out.npy xor.npy || fail "xor on d3d12 under the layer differs from NumPy"
guarded "xor --backend d3d12"
# check: many cases, each with its backend, on several threads, sharing the process's device.
expect_status 0 check "$TESTDATA/golden/manifest.json" --backend d3d12 --filter uint16 -j 2
expect_out " passed, 0 failed"
guarded "check --backend d3d12"

# ---- the Python module ---------------------------------------------------------------------------
if "$P" -c "import dmlbits" 2>/dev/null; then
  # python_case WHAT: runs the Python script on standard input, which prints "ok" at its end.
  python_case() {
    checks=$((checks + 1))
    "$P" - > py.out 2> py.err && status=0 || status=$?
    [ "$status" = 0 ] && grep -qx ok py.out || fail "python, $1: status $status: $(cat py.err)"
    err=$(cat py.err)
  }
  # The main thread's calls: its kept backends are dropped and the device released at atexit.
  python_case "main thread" <<'PY'
import numpy as np
import dmlbits
a = np.arange(1000, dtype=np.uint32)
assert (dmlbits.bitwise_not(a, backend="d3d12") == ~a).all()
assert (dmlbits.bitwise_and(a, 7, backend="d3d12") == (a & 7)).all()
assert "d3d12" in [b["name"] for b in dmlbits.devices()["backends"]]
print("ok")
PY
  guarded "python bitwise_not(backend='d3d12')"
  # Another thread's: its kept backend goes when the thread's C++ thread-locals are destroyed,
  # which may come after Python's join and after atexit; the device is then never released,
  # but nothing may reach Vulkan at exit either way.
  python_case "another thread" <<'PY'
import threading
import numpy as np
import dmlbits
a = np.arange(1000, dtype=np.uint32)
out = {}
t = threading.Thread(target=lambda: out.setdefault("r", dmlbits.bitwise_and(a, 7, backend="d3d12")))
t.start(); t.join()
assert (out["r"] == (a & 7)).all()
print("ok")
PY
  [[ "$err" != *"exit_guard layer"* ]] || fail "python, another thread: $err"
  grep -qx vkCreateDevice "$EXIT_GUARD_LOG" 2>/dev/null || fail "python, another thread: the layer saw no device created"
  ! grep -q "after exit" "$EXIT_GUARD_LOG" 2>/dev/null || fail "python, another thread: $(grep "after exit" "$EXIT_GUARD_LOG")"
elif [ "${DMLBITS_EXIT_GUARD_PYTHON:-}" = 1 ]; then
  fail "the Python module was built but does not import: $("$P" -c "import dmlbits" 2>&1 | tail -1)"
else
  echo "the Python module is not importable (PYTHONPATH); its part was not run" >&2
fi
finish
