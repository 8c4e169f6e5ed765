// The kernel table: every kernel file's rows, named, and the dispatch from (operation, width,
// instruction set, operand layout) to the kernel to run.
#include <array>
#include <vector>

#include <fmt/format.h>

#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "kernels.hpp"

namespace dmlbits {
namespace {

constexpr std::array<std::string_view, kKernelOpCount> kKernelOpNames{
    "and", "or", "xor", "not", "shl", "shr", "popcnt_u8", "popcnt_u32"};

std::string_view operands_suffix(Operands o) {
  switch (o) {
    case Operands::vectors: return "";
    case Operands::b_scalar: return "_c";
    case Operands::a_scalar: return "_rc";
  }
  return "";
}

std::vector<KernelInfo> build_table() {
  std::vector<KernelInfo> table;
  // Order matters: within one (op, width, set, operands), later rows are preferred.
  for (auto rows : {cpu::scalar_kernels(), cpu::avx2_kernels(), cpu::avx512_kernels(),
                    cpu::avx512_vpopcntdq_kernels(), cpu::avx512_bitalg_kernels()}) {
    for (const cpu::KernelRow& r : rows) {
      KernelInfo k;
      k.op = r.op;
      k.width = r.width;
      k.operands = r.operands;
      k.isa = r.isa;
      k.extension = r.extension;
      k.fn = r.fn;
      k.name = fmt::format("x{}_{}{}__{}", r.width * 8, kernel_op_name(r.op), operands_suffix(r.operands), r.tag);
      table.push_back(std::move(k));
    }
  }
  return table;
}

}  // namespace

std::string_view kernel_op_name(KernelOp op) { return kKernelOpNames.at(static_cast<std::size_t>(op)); }

bool kernel_op_is_binary(KernelOp op) {
  return op == KernelOp::bit_and || op == KernelOp::bit_or || op == KernelOp::bit_xor || op == KernelOp::shl ||
         op == KernelOp::shr;
}

KernelOp kernel_op(OpKind op, DType out_dtype) {
  switch (op) {
    case OpKind::shl: return KernelOp::shl;
    case OpKind::shr: return KernelOp::shr;
    case OpKind::bit_and: return KernelOp::bit_and;
    case OpKind::bit_or: return KernelOp::bit_or;
    case OpKind::bit_xor: return KernelOp::bit_xor;
    case OpKind::bit_not: return KernelOp::bit_not;
    case OpKind::popcount: return out_dtype == DType::uint32 ? KernelOp::popcnt_u32 : KernelOp::popcnt_u8;
  }
  throw Error(Errc::internal, "kernel_op: unknown operator");
}

std::span<const KernelInfo> kernel_table() {
  static const std::vector<KernelInfo> table = build_table();
  return table;
}

bool kernel_runnable(const KernelInfo& k) {
  if (!isa_supported(k.isa)) return false;
  const CpuFeatures& f = cpu_features();
  switch (k.extension) {
    case CpuExtension::none: return true;
    case CpuExtension::popcnt: return f.popcnt;
    case CpuExtension::avx512vpopcntdq: return f.avx512vpopcntdq;
    case CpuExtension::avx512bitalg: return f.avx512bitalg;
  }
  return false;
}

const KernelInfo* lookup_kernel(KernelOp op, unsigned width, Isa isa, Operands operands) {
  const KernelInfo* found = nullptr;
  for (const KernelInfo& k : kernel_table())
    if (k.op == op && k.width == width && k.isa == isa && k.operands == operands && kernel_runnable(k)) found = &k;
  return found;
}

const KernelInfo& select_kernel(KernelOp op, unsigned width, Isa isa, Operands operands) {
  for (int i = static_cast<int>(isa); i >= 0; --i)
    if (const KernelInfo* k = lookup_kernel(op, width, static_cast<Isa>(i), operands)) return *k;
  throw Error(Errc::internal, fmt::format("no CPU kernel for x{}_{} ({} operands)", width * 8, kernel_op_name(op),
                                          operands_suffix(operands)));
}

}  // namespace dmlbits
