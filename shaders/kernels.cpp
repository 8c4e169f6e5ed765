// The kernel catalogue of gpu_kernel.hpp: which keys exist, their names, and their programs.
#include <algorithm>
#include <string>

#include "dmlbits/error.hpp"
#include "gpu_kernel.hpp"
#include "kernel_writer.hpp"

namespace dmlbits::gpu {
namespace {

bool valid_width(unsigned bits) { return bits == 8 || bits == 16 || bits == 32 || bits == 64; }

// The output widths an operator's kernels produce for `in_bits` inputs: the input's, or those
// of the table's output types (popcount: 8 and 32).
std::vector<unsigned> output_widths(const OpInfo& op, unsigned in_bits) {
  if (op.output_dtype_is_input_dtype()) return {in_bits};
  std::vector<unsigned> widths;
  for (const DTypeInfo& t : dtype_table())
    if (op.tiers.back().outputs.contains(t.dtype)) widths.push_back(static_cast<unsigned>(t.size * 8));
  return widths;
}

void check_key(const KernelKey& key) {
  const OpInfo& op = op_info(key.op);
  bool ok = op.shader != ShaderFamily::none && valid_width(key.in_bits);
  bool out_ok = false;
  for (unsigned w : output_widths(op, key.in_bits)) out_ok = out_ok || w == key.out_bits;
  ok = ok && out_ok && (op.shift || key.shift_overflow == ShiftOverflow::zero);
  if (!ok)
    throw Error(Errc::internal, "no GPU kernel for " + std::string(op.verb) + ", " + std::to_string(key.in_bits) +
                                    "-bit in, " + std::to_string(key.out_bits) + "-bit out");
}

dxbc::Program program(const KernelKey& key) {
  check_key(key);
  switch (op_info(key.op).shader) {
    case ShaderFamily::bitwise:
      return shader::bitwise_kernel(key);
    case ShaderFamily::shift:
      return shader::shift_kernel(key);
    case ShaderFamily::popcount:
      return shader::popcount_kernel(key);
    case ShaderFamily::none:
      break;  // refused by check_key
  }
  throw Error(Errc::internal, "no GPU kernel family for " + std::string(op_info(key.op).verb));
}

}  // namespace

namespace shader {
std::unique_ptr<Family> make_family(const KernelKey& key) {
  check_key(key);
  switch (op_info(key.op).shader) {
    case ShaderFamily::bitwise:
      return bitwise_family(key);
    case ShaderFamily::shift:
      return shift_family(key);
    case ShaderFamily::popcount:
      return popcount_family(key);
    case ShaderFamily::none:
      break;  // refused by check_key
  }
  throw Error(Errc::internal, "no GPU kernel family for " + std::string(op_info(key.op).verb));
}
}  // namespace shader

unsigned unit_bytes(const KernelKey& key) {
  if (!key.strided) return 16;
  return key.out_bits == 64 ? 8 : 4;
}

unsigned unit_input_bytes(const KernelKey& key) { return 16 * key.in_bits / key.out_bits; }

std::uint32_t output_units(const KernelKey& key, std::uint32_t count) {
  const std::uint64_t per_unit = unit_bytes(key) * 8 / key.out_bits;
  return static_cast<std::uint32_t>((std::uint64_t{count} + per_unit - 1) / per_unit);
}

DispatchGrid dispatch_grid(const KernelKey& key, std::uint32_t count) {
  const std::uint64_t units = output_units(key, count);
  const std::uint64_t groups =
      std::clamp<std::uint64_t>((units + kThreadGroupSize - 1) / kThreadGroupSize, 1, kMaxGroups);
  return {static_cast<std::uint32_t>(groups), static_cast<std::uint32_t>(groups * kThreadGroupSize)};
}

std::vector<KernelKey> all_kernel_keys() {
  std::vector<KernelKey> keys;
  for (bool strided : {false, true})
    for (unsigned bits : {8u, 16u, 32u, 64u})
      for (const OpInfo& op : op_table()) {
        if (op.shader == ShaderFamily::none) continue;
        for (unsigned out : output_widths(op, bits)) {
          if (!op.shift) keys.push_back({op.kind, bits, out, ShiftOverflow::zero, strided});
          else
            for (ShiftOverflow mode : shift_overflow_modes()) keys.push_back({op.kind, bits, out, mode, strided});
        }
      }
  return keys;
}

std::string to_string(const KernelKey& key) {
  std::string s(op_info(key.op).verb);
  s += "_u" + std::to_string(key.in_bits);
  if (!op_info(key.op).output_dtype_is_input_dtype()) s += "_to_u" + std::to_string(key.out_bits);
  if (op_info(key.op).shift) s += "_" + std::string(shift_overflow_name(key.shift_overflow));
  if (key.strided) s += "_strided";
  return s;
}

std::vector<std::uint8_t> build_kernel(const KernelKey& key) { return dxbc::assemble(program(key)); }

std::string kernel_listing(const KernelKey& key) { return dxbc::listing(program(key)); }

}  // namespace dmlbits::gpu
