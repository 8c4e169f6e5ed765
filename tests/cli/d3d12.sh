#!/usr/bin/env bash
# The d3d12 backend through the binary: popcount of every dtype against NumPy, a streamed run
# across chunks, `devices`, --adapter and its errors, the CPU fallback and exit 6 when the
# runtime or the Vulkan driver is missing, timing phases, and the golden and ONNX manifests
# through `dmlbits check --backend d3d12`. Expected values come from NumPy.
#
# Needs an adapter (lavapipe is one): skipped (77) without one, unless DMLBITS_REQUIRE_D3D12=1.
source "$(dirname "$0")/lib.sh"
cd "$WORK"
P="$PYTHON"

need_d3d12_adapter

# ---- popcount of every dtype, both output types, equal to NumPy's bit counts -----------------
"$P" - <<'PY'
import numpy as np
rng = np.random.default_rng(4)
for name in ["uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
             "float16", "float32", "float64"]:
    dt = np.dtype(name)
    n = 4099  # a tail past every word and group size
    raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8)
    a = raw.view(dt).reshape(n)
    np.save(f"in_{name}.npy", a)
    bits = np.unpackbits(raw).reshape(n, dt.itemsize * 8).sum(axis=1)
    np.save(f"want_{name}_u8.npy", bits.astype(np.uint8))
    np.save(f"want_{name}_u32.npy", bits.astype(np.uint32))
PY
for t in uint8 uint16 uint32 uint64 int8 int16 int32 int64 float16 float32 float64; do
  expect_status 0 popcount "in_$t.npy" -o "out_$t.npy" --backend d3d12
  cmp -s "out_$t.npy" "want_${t}_u8.npy" || fail "popcount $t on d3d12 differs from NumPy"
  expect_status 0 popcount "in_$t.npy" -o "out32_$t.npy" --backend d3d12 --out-dtype uint32
  cmp -s "out32_$t.npy" "want_${t}_u32.npy" || fail "popcount $t --out-dtype uint32 on d3d12 differs from NumPy"
done

# ---- a run larger than one 8 MiB stream chunk, with a broadcast one ---------------------------
"$P" - <<'PY'
import numpy as np
rng = np.random.default_rng(5)
a = rng.integers(0, 2**32, size=5 << 20, dtype=np.uint32)  # 20 MiB: auto's threshold is 16 MiB
b = rng.integers(0, 2**32, size=5 << 20, dtype=np.uint32)
np.save("big_a.npy", a); np.save("big_b.npy", b)
np.save("big_xor.npy", a ^ b)
col = rng.integers(0, 40, size=(1000, 1), dtype=np.uint16)
row = rng.integers(0, 2**16, size=(1, 3000), dtype=np.uint16)
np.save("col.npy", col); np.save("row.npy", row)
np.save("shl_wrap.npy", (row.astype(np.uint32) << (col % 16)).astype(np.uint16))
# The default, directml: the uint16 as a 32-bit lane shifted by count & 31 (counts 16..31: 0).
np.save("shl_directml.npy", ((row.astype(np.uint64) << (col & 31)) & 0xFFFFFFFF).astype(np.uint16))
PY
expect_status 0 xor big_a.npy big_b.npy -o big_out.npy --backend d3d12 -v
cmp -s big_out.npy big_xor.npy || fail "xor of 20 MiB on d3d12 differs from NumPy"
expect_err "runs on the d3d12 backend (llvmpipe"
expect_status 0 shl row.npy col.npy --shift-overflow wrap -o shl_out.npy --backend d3d12
cmp -s shl_out.npy shl_wrap.npy || fail "broadcast shl --shift-overflow wrap on d3d12 differs from NumPy"
expect_status 0 shl row.npy col.npy -o shl_out.npy --backend d3d12
cmp -s shl_out.npy shl_directml.npy || fail "broadcast shl (default mode, directml) on d3d12 differs from NumPy"

# ---- devices --------------------------------------------------------------------------------
expect_status 0 devices
expect_out "llvmpipe"
expect_out "D3D feature level"
"$P" - "$devices" <<'PY' || fail "devices --json lacks the adapter details"
import json, sys
d = json.loads(sys.argv[1])
names = [b["name"] for b in d["backends"]]
assert names[:2] == ["cpu", "cpu-reference"] and "d3d12" in names, names
cpu = d["backends"][0]
assert cpu["threads"] >= 1 and cpu["isa"] in cpu["isas"], cpu
ad = d["d3d12"]["adapters"]
assert any("llvmpipe" in a["name"] for a in ad), ad
for a in ad:
    for k in ("index", "name", "vendor", "software", "memory_bytes", "feature_level", "shader_model"):
        assert k in a, (k, a)
lvp = [a for a in ad if "llvmpipe" in a["name"]][0]
assert lvp["software"] is True and lvp["vendor"] == "Mesa", lvp
PY

# ---- --adapter --------------------------------------------------------------------------------
expect_status 0 not in_uint8.npy -o a.npy --backend d3d12 --adapter 0 -v
expect_err "software adapter 0"
expect_status 0 not in_uint8.npy -o a.npy --backend d3d12 --adapter LLVMPIPE
expect_status 2 not in_uint8.npy -o a.npy --backend d3d12 --adapter 99
expect_one_line
expect_err "no adapter 99 (adapters: 0 llvmpipe"
expect_status 2 not in_uint8.npy -o a.npy --backend d3d12 --adapter "no such gpu"
expect_err "no adapter named like 'no such gpu'"
expect_status 2 not in_uint8.npy -o a.npy --backend cpu --adapter 0
expect_err "--adapter applies to the d3d12, directml and auto backends"
# check's --adapter applies to the cases on d3d12, directml and auto, as --isa to those on cpu
# and auto (#23 item 16): refused only when it would apply to none, or with a --backend that
# takes no adapter (the operators' words).
expect_status 2 check "$TESTDATA/golden/manifest.json" --adapter 0
expect_err "--adapter applies to the d3d12, directml and auto backends, and no case of"
expect_status 2 check "$TESTDATA/golden/manifest.json" --backend cpu --adapter 0
expect_err "--adapter applies to the d3d12, directml and auto backends, not cpu"
"$P" -c "import numpy as np; np.save('not_u8.npy', ~np.load('in_uint8.npy'))"
cat > adapter_cases.json <<JSON
{"cases": [{"name": "on-d3d12", "op": "not", "inputs": ["$WORK/in_uint8.npy"], "backend": "d3d12",
            "expected": "$WORK/not_u8.npy"},
           {"name": "on-cpu", "op": "not", "inputs": ["$WORK/in_uint8.npy"], "expected": "$WORK/not_u8.npy"}]}
JSON
expect_status 0 check adapter_cases.json --adapter 0
expect_out "2 passed, 0 failed"
expect_status 1 check adapter_cases.json --adapter 99
expect_out "no adapter 99"
expect_no_file a.npy.tmp
# auto keeps small runs on the CPU; with a large one it names why it did not take lavapipe.
expect_status 0 not in_uint8.npy -o a.npy -v
expect_err "auto chose cpu: the output (4.0 KiB) is below 16 MiB"
expect_status 0 xor big_a.npy big_b.npy -o big_out.npy --adapter 0 -v
expect_err "auto chose cpu: adapter 0 (llvmpipe"
expect_err "is software"

# ---- the runtime or the driver missing ----------------------------------------------------------
export DMLBITS_VKD3D_LIBRARY=/nonexistent/libvkd3d-utils.so.1
# auto looks for a GPU device node before it loads the runtime (#29): without one, that is the
# reason; with --adapter (no device-node test) it is the runtime.
expect_status 0 xor big_a.npy big_b.npy -o big_out.npy -v
if ls /dev/dri/renderD* /dev/nvidia0 /dev/dxg /dev/kgsl-3d0 /dev/mali0 > /dev/null 2>&1; then
  expect_err "auto chose cpu: vkd3d not found: /nonexistent/libvkd3d-utils.so.1: cannot open shared object file"
else
  expect_err "auto chose cpu: no hardware adapter (no GPU device node"
fi
expect_status 0 xor big_a.npy big_b.npy -o big_out.npy --adapter 0 -v
expect_err "auto chose cpu: vkd3d not found: /nonexistent/libvkd3d-utils.so.1: cannot open shared object file"
cmp -s big_out.npy big_xor.npy || fail "the CPU fallback's xor differs from NumPy"
rm -f a.npy
expect_status 6 popcount in_uint8.npy -o a.npy --backend d3d12
expect_one_line
expect_err "the d3d12 backend cannot run: no D3D12 runtime: /nonexistent/libvkd3d-utils.so.1"
expect_no_file a.npy
expect_status 0 devices
expect_out "d3d12          unavailable: /nonexistent/libvkd3d-utils.so.1"
unset DMLBITS_VKD3D_LIBRARY
VK_ICD_FILENAMES=/nonexistent.json expect_status 6 not in_uint8.npy -o a.npy --backend d3d12
expect_one_line
expect_err "the d3d12 backend cannot run: no adapter"

# ---- timing -----------------------------------------------------------------------------------
expect_status 0 and in_uint32.npy in_uint32.npy -o a.npy --backend d3d12 --time --time-json t.json
for phase in device pipeline upload dispatch readback; do expect_err "    $phase"; done
"$P" -c "
import json; d = json.load(open('t.json'))
p = d['backend_phases']
assert d['backend'] == 'd3d12' and p['dispatch_s'] > 0 and 'device_s' in p and 'execute_s' in d['phases'], d" ||
  fail "--time-json lacks the d3d12 phases"

# ---- the golden and ONNX conformance manifests on d3d12 ------------------------------------------
ncases() { "$P" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['cases']))" "$1"; }
want=$(ncases "$TESTDATA/golden/manifest.json")
expect_status 0 check "$TESTDATA/golden/manifest.json" --backend d3d12
expect_out "$want passed, 0 failed"
if [ -d "${DMLBITS_CONFORMANCE_DIR:-/nonexistent}/onnx-node" ]; then
  "$P" "$DMLBITS_SOURCE_DIR/scripts/make_onnx_manifest.py" "$DMLBITS_CONFORMANCE_DIR" onnx.json >/dev/null ||
    fail "make_onnx_manifest.py failed"
  want=$(ncases onnx.json)
  expect_status 0 check onnx.json --backend d3d12 --adapter 0
  expect_out "$want passed, 0 failed"
else
  echo "conformance data not found; the ONNX manifest was not run on d3d12" >&2
fi
finish
