// The kernel table: every kernel file's rows, named, and the dispatch from (operation, width,
// instruction set, operand layout) to the kernel to run.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "kernels.hpp"

namespace dmlbits {
namespace {

std::string_view operands_suffix(Operands o) {
  switch (o) {
    case Operands::vectors: return "";
    case Operands::b_scalar: return "_c";
    case Operands::a_scalar: return "_rc";
  }
  return "";
}

// Built at a run's first dispatch. Sized once: growing it row by row left a trail of freed
// copies that took the heap over fresh pages, each a page fault (dear on a virtual machine:
// testdata/benchmarks.md, "Fourth pass").
std::vector<KernelInfo> build_table() {
  // Order matters: within one (op, width, set, operands), later rows are preferred.
  const auto files = {cpu::scalar_kernels(), cpu::avx2_kernels(), cpu::avx512_kernels(),
                      cpu::avx512_vpopcntdq_kernels(), cpu::avx512_bitalg_kernels()};
  std::size_t rows_count = 0;
  for (auto rows : files) rows_count += rows.size();
  std::vector<KernelInfo> table;
  table.reserve(rows_count);
  for (auto rows : files) {
    for (const cpu::KernelRow& r : rows) {
      KernelInfo k;
      k.op = r.op;
      k.width = r.width;
      k.out_width = r.out_width;
      k.operands = r.operands;
      k.isa = r.isa;
      k.extension = r.extension;
      k.fn = r.fn;
      k.tag = r.tag;
      table.push_back(std::move(k));
    }
  }
  return table;
}

// Where a narrower set's kernel beat the widest set's on a host, in the caches (256 KiB) and
// in memory (256 MiB): the per-operation choice (cpu_backend.hpp, KernelChoice). Each row is
// explained by the figures in testdata/benchmarks.md, "Kernel choice per operation"; a row
// goes when a change to the wide kernel makes it win again.
constexpr std::array kChoices{
    // 16-bit popcount into uint32: the AVX2 kernel ran faster than the BITALG one in the caches
    // and in memory, in three runs; why (the widening to two 512-bit vectors per input vector is
    // the likely cost) was not examined.
    KernelChoice{OpKind::popcount, 2, 4, Isa::avx512, "avx2"},
};

// 1, 2, 4 or 8 (std::has_single_bit calls libgcc's popcount without -mpopcnt).
bool one_to_eight(unsigned w) { return w == 1 || w == 2 || w == 4 || w == 8; }

// A slot holds a kernel's position in kernel_table(), or kNoKernel. Bytes keep both kinds of
// table for every set within one page, aligned below (a run's first dispatch writes them all,
// and each fresh page it writes is a fault: dear on a virtual machine).
using Slot = std::uint8_t;
constexpr Slot kNoKernel = UINT8_MAX;
using SlotRow = std::array<Slot, kKernelKeys>;  // one set's slots, by kernel_key()
constexpr std::size_t kTablesBytes = 2 * kIsaCount * sizeof(SlotRow) + sizeof(std::span<const KernelInfo>);

// The kernels select_kernel and dispatch_kernel answer with, for every key and set, filled once
// (at the first lookup) from the kernel table and kChoices, so that a lookup is an index: a 4x4
// operation once spent longer finding its kernel, a walk of the whole table per set, than
// running it. The instruction-set overrides (DMLBITS_ISA, force_isa) only change which set's row
// a backend reads, never the rows.
struct alignas(std::min<std::size_t>(std::bit_ceil(kTablesBytes), 4096)) KernelChoiceTables {
  std::array<SlotRow, kIsaCount> select;    // the kernel of the widest set at or below the row's
  std::array<SlotRow, kIsaCount> dispatch;  // select's, with kChoices' rows for that host set
  std::span<const KernelInfo> kernels;      // kernel_table(), which the slots index
};

KernelChoiceTables build_choice_tables() {
  KernelChoiceTables t;
  t.kernels = kernel_table();
  if (t.kernels.size() >= kNoKernel)
    throw Error(Errc::internal, fmt::format("kernel_table.cpp: {} kernels do not fit a Slot: widen it", t.kernels.size()));
  // Each set's own kernels: the last runnable row of a key is the preferred one (build_table).
  std::array<SlotRow, kIsaCount> own;
  for (SlotRow& row : own) row.fill(kNoKernel);
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    const KernelInfo& k = t.kernels[i];
    const std::size_t key = kernel_key(k.op, k.width, k.out_width, k.operands);
    if (key == kKernelKeys || static_cast<std::size_t>(k.isa) >= kIsaCount)
      throw Error(Errc::internal, fmt::format("kernel_table.cpp: {} has no slot", kernel_name(k)));
    if (kernel_runnable(k)) own[static_cast<std::size_t>(k.isa)][key] = static_cast<Slot>(i);
  }
  // A set without its own kernel for a key takes the nearest narrower set's.
  for (std::size_t s = 0; s < kIsaCount; ++s)
    for (std::size_t key = 0; key < kKernelKeys; ++key)
      t.select[s][key] = own[s][key] != kNoKernel || s == 0 ? own[s][key] : t.select[s - 1][key];
  // The measured exceptions, for every operand layout of their operation. Where two rows named
  // one key the first whose kernel runs would win, so they are written last to first.
  t.dispatch = t.select;
  for (auto c = kChoices.rbegin(); c != kChoices.rend(); ++c) {
    if (static_cast<std::size_t>(c->host) >= kIsaCount) continue;
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      const KernelInfo& k = t.kernels[i];
      if (k.op == c->op && k.width == c->width && k.out_width == c->out_width &&
          std::string_view(k.tag) == c->tag && kernel_runnable(k))
        t.dispatch[static_cast<std::size_t>(c->host)][kernel_key(k.op, k.width, k.out_width, k.operands)] =
            static_cast<Slot>(i);
    }
  }
  return t;
}

const KernelChoiceTables& choice_tables() {
  static const KernelChoiceTables tables = build_choice_tables();
  return tables;
}

const KernelInfo* chosen(const KernelChoiceTables& t, const std::array<SlotRow, kIsaCount>& rows, OpKind op,
                         unsigned width, unsigned out_width, Isa isa, Operands operands) {
  const std::size_t key = kernel_key(op, width, out_width, operands);
  if (key == kKernelKeys || static_cast<std::size_t>(isa) >= kIsaCount) return nullptr;  // not a kernel's key
  const Slot slot = rows[static_cast<std::size_t>(isa)][key];
  return slot == kNoKernel ? nullptr : &t.kernels[slot];
}

}  // namespace

std::span<const KernelChoice> kernel_choices() { return kChoices; }

std::size_t kernel_key(OpKind op, unsigned width, unsigned out_width, Operands operands) {
  const auto o = static_cast<std::size_t>(op);
  if (o >= kOpCount || !one_to_eight(width) || !one_to_eight(out_width) ||
      static_cast<std::size_t>(operands) >= kOperandsCount)
    return kKernelKeys;
  return ((o * kKernelWidths + static_cast<std::size_t>(std::countr_zero(width))) * kKernelWidths +
          static_cast<std::size_t>(std::countr_zero(out_width))) * kOperandsCount + static_cast<std::size_t>(operands);
}

std::string kernel_op_name(OpKind op, unsigned out_width) {
  const OpInfo& info = op_info(op);
  if (info.output_dtype_is_input_dtype()) return std::string(info.kernel_name);
  return fmt::format("{}_u{}", info.kernel_name, out_width * 8);
}

std::string kernel_name(const KernelInfo& k) {
  return fmt::format("x{}_{}{}__{}", k.width * 8, kernel_op_name(k.op, k.out_width), operands_suffix(k.operands), k.tag);
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

const KernelInfo* lookup_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  // select_kernel's answer is the set's own kernel whenever it has one.
  const KernelInfo* k = select_kernel(op, width, out_width, isa, operands);
  return k != nullptr && k->isa == isa ? k : nullptr;
}

const KernelInfo* select_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  const KernelChoiceTables& t = choice_tables();
  return chosen(t, t.select, op, width, out_width, isa, operands);
}

const KernelInfo* dispatch_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  const KernelChoiceTables& t = choice_tables();
  return chosen(t, t.dispatch, op, width, out_width, isa, operands);
}

}  // namespace dmlbits
