#!/usr/bin/env bash
# Every GPU kernel's DXBC passes two tools that do not share our encoder: vkd3d-compiler
# (vkd3d's DXBC parser and checksum check, translating to SPIR-V; prints nothing on success)
# and spirv-val on the SPIR-V it produces. A container with a broken checksum must be refused,
# so that a pass means the check ran. Skipped (77) only when the tools are not installed.
source "$(dirname "$0")/lib.sh"
: "${DMLBITS_DUMP_KERNELS:?set DMLBITS_DUMP_KERNELS to the dmlbits_dump_kernels binary}"

for tool in vkd3d-compiler spirv-val; do
  if ! command -v "$tool" >/dev/null; then
    echo "skipped: $tool is not installed (packages vkd3d-compiler, spirv-tools)"
    exit 77
  fi
done

# check_kernels DIR NAMES: every kernel NAME in DIR assembles to SPIR-V that spirv-val accepts.
check_kernels() {
  local dir=$1 names=$2 name f
  for name in $names; do
    checks=$((checks + 1))
    f="$dir/$name"
    [ -s "$f.dxbc" ] || { fail "$name.dxbc missing or empty"; continue; }
    head -n 1 "$f.asm" | grep -qx 'cs_5_0' || fail "$name.asm does not start with cs_5_0"
    if ! vkd3d-compiler -x dxbc-tpf -b spirv-binary -o "$f.spv" "$f.dxbc" 2>"$f.err"; then
      fail "vkd3d-compiler rejected $name: $(head -n 3 "$f.err")"
      continue
    fi
    [ ! -s "$f.err" ] || fail "vkd3d-compiler printed messages for $name: $(head -n 3 "$f.err")"
    [ -s "$f.spv" ] || { fail "vkd3d-compiler wrote no SPIR-V for $name"; continue; }
    spirv-val --target-env vulkan1.0 "$f.spv" 2>"$f.val" || fail "spirv-val rejected $name: $(head -n 3 "$f.val")"
  done
}

dir="$WORK/kernels"
names=$("$DMLBITS_DUMP_KERNELS" --listings "$dir") || { echo "FAIL: dmlbits_dump_kernels failed" >&2; exit 1; }
n=$(printf '%s\n' "$names" | wc -l)
# and/or/xor/not 16, shl/shr x 3 modes 24, popcount 8 (x widths and outputs), packed + strided.
[ "$n" -eq 96 ] || fail "expected 96 kernels, dump_kernels listed $n"
check_kernels "$dir" "$names"

# Fused graph kernels (shaders/graph_kernel.hpp): the examples, which use every family, width,
# shift mode, scalars, eight buffers and none.
graph_names=$("$DMLBITS_DUMP_KERNELS" --listings --graphs "$WORK/graphs") ||
  { echo "FAIL: dmlbits_dump_kernels --graphs failed" >&2; exit 1; }
n=$(printf '%s\n' "$graph_names" | wc -l)
[ "$n" -ge 7 ] || fail "expected at least 7 graph kernels, dump_kernels listed $n"
check_kernels "$WORK/graphs" "$graph_names"

# The checks can fail: a flipped checksum byte is refused.
checks=$((checks + 1))
first=$(printf '%s\n' "$names" | head -n 1)
cp "$dir/$first.dxbc" "$WORK/bad.dxbc"
printf '\xff' | dd of="$WORK/bad.dxbc" bs=1 seek=4 conv=notrunc status=none
if cmp -s "$dir/$first.dxbc" "$WORK/bad.dxbc"; then
  fail "could not corrupt the checksum of $first.dxbc"
elif vkd3d-compiler -x dxbc-tpf -b spirv-binary -o "$WORK/bad.spv" "$WORK/bad.dxbc" 2>/dev/null; then
  fail "vkd3d-compiler accepted a container with a wrong checksum"
fi

finish
