// The kernel catalogue of gpu_kernel.hpp: which keys exist, their names, and their programs.
#include <string>

#include "dmlbits/error.hpp"
#include "gpu_kernel.hpp"
#include "kernel_writer.hpp"

namespace dmlbits::gpu {
namespace {

bool is_shift(OpKind op) { return op == OpKind::shl || op == OpKind::shr; }
bool valid_width(unsigned bits) { return bits == 8 || bits == 16 || bits == 32 || bits == 64; }

void check_key(const KernelKey& key) {
  bool ok = valid_width(key.in_bits);
  switch (key.op) {
    case OpKind::popcount: ok = ok && (key.out_bits == 8 || key.out_bits == 32); break;
    case OpKind::shl:
    case OpKind::shr:
    case OpKind::bit_and:
    case OpKind::bit_or:
    case OpKind::bit_xor:
    case OpKind::bit_not: ok = ok && key.out_bits == key.in_bits; break;
    default: ok = false;
  }
  if (!is_shift(key.op)) ok = ok && key.shift_overflow == ShiftOverflow::zero;
  if (!ok)
    throw Error(Errc::internal, "no GPU kernel for op " + std::to_string(static_cast<int>(key.op)) + ", " +
                                    std::to_string(key.in_bits) + "-bit in, " + std::to_string(key.out_bits) + "-bit out");
}

dxbc::Program program(const KernelKey& key) {
  check_key(key);
  switch (key.op) {
    case OpKind::popcount: return shader::popcount_kernel(key);
    case OpKind::shl:
    case OpKind::shr: return shader::shift_kernel(key);
    default: return shader::bitwise_kernel(key);
  }
}

}  // namespace

std::uint32_t output_units(const KernelKey& key, std::uint32_t count) {
  if (key.out_bits >= 32) return count;
  const std::uint64_t per_word = 32 / key.out_bits;
  return static_cast<std::uint32_t>((std::uint64_t{count} + per_word - 1) / per_word);
}

std::vector<KernelKey> all_kernel_keys() {
  std::vector<KernelKey> keys;
  for (bool strided : {false, true}) {
    for (unsigned bits : {8u, 16u, 32u, 64u}) {
      for (OpKind op : {OpKind::bit_and, OpKind::bit_or, OpKind::bit_xor, OpKind::bit_not})
        keys.push_back({op, bits, bits, ShiftOverflow::zero, strided});
      for (OpKind op : {OpKind::shl, OpKind::shr})
        for (ShiftOverflow mode : {ShiftOverflow::zero, ShiftOverflow::wrap})
          keys.push_back({op, bits, bits, mode, strided});
      for (unsigned out : {8u, 32u}) keys.push_back({OpKind::popcount, bits, out, ShiftOverflow::zero, strided});
    }
  }
  return keys;
}

std::string to_string(const KernelKey& key) {
  std::string s(op_info(key.op).verb);
  s += "_u" + std::to_string(key.in_bits);
  if (key.op == OpKind::popcount) s += "_to_u" + std::to_string(key.out_bits);
  if (is_shift(key.op)) s += "_" + std::string(shift_overflow_name(key.shift_overflow));
  if (key.strided) s += "_strided";
  return s;
}

std::vector<std::uint8_t> build_kernel(const KernelKey& key) { return dxbc::assemble(program(key)); }

std::string kernel_listing(const KernelKey& key) { return dxbc::listing(program(key)); }

}  // namespace dmlbits::gpu
