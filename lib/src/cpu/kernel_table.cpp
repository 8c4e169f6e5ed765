// The kernel table: every kernel file's rows, named, and the dispatch from (operation, width,
// instruction set, operand layout) to the kernel to run.
#include <array>
#include <atomic>
#include <bit>
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

}  // namespace

std::span<const KernelChoice> kernel_choices() { return kChoices; }

namespace {

// The answers of select_kernel and dispatch_kernel, remembered: they depend on their arguments
// and the CPU only, and a 4x4 operation spent longer finding its kernel (a walk of the whole
// table per instruction set) than running it. One slot per (op, width, out_width, set,
// operands), filled on first use; threads that race fill it with the same answer. A slot
// starts as nullptr ("not looked up yet") and so does the whole memo: constant-initialised,
// it sits in zero pages that no start-up writes to (a constructor storing a marker in each of
// its ~1,000 slots made every run fault in two pages per memo before its first dispatch).
class KernelMemo {
 public:
  template <class Find>
  const KernelInfo* get(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands, Find find) {
    const auto o = static_cast<std::size_t>(op);
    if (o >= kOps || !one_to_eight(width) || !one_to_eight(out_width) ||
        static_cast<std::size_t>(isa) >= kIsaCount || static_cast<std::size_t>(operands) >= 3)
      return find();  // not a kernel's key: looked up, never remembered
    std::atomic<const KernelInfo*>& slot =
        slots_[(((o * 4 + static_cast<std::size_t>(std::countr_zero(width))) * 4 +
                 static_cast<std::size_t>(std::countr_zero(out_width))) * kIsaCount + static_cast<std::size_t>(isa)) * 3 +
               static_cast<std::size_t>(operands)];
    const KernelInfo* k = slot.load(std::memory_order_acquire);
    if (k == nullptr) {
      k = find();
      slot.store(k != nullptr ? k : none(), std::memory_order_release);
    }
    return k == none() ? nullptr : k;
  }

 private:
  static constexpr std::size_t kOps = 7;  // OpKind's values
  // 1, 2, 4 or 8 (std::has_single_bit calls libgcc's popcount without -mpopcnt).
  static bool one_to_eight(unsigned w) { return w == 1 || w == 2 || w == 4 || w == 8; }
  static const KernelInfo* none() {
    static const KernelInfo marker;  // "looked up: no kernel" (nullptr means "not looked up yet")
    return &marker;
  }
  std::array<std::atomic<const KernelInfo*>, kOps * 4 * 4 * kIsaCount * 3> slots_{};
};
static_assert(static_cast<std::size_t>(OpKind::popcount) + 1 == 7, "KernelMemo::kOps counts OpKind's values");

constinit KernelMemo select_memo_slots;
constinit KernelMemo dispatch_memo_slots;
KernelMemo& select_memo() { return select_memo_slots; }
KernelMemo& dispatch_memo() { return dispatch_memo_slots; }

const KernelInfo* find_dispatch_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  for (const KernelChoice& c : kChoices) {
    if (c.op != op || c.width != width || c.out_width != out_width || c.host != isa) continue;
    const KernelInfo* found = nullptr;
    for (const KernelInfo& k : kernel_table())
      if (k.op == op && k.width == width && k.out_width == out_width && k.operands == operands &&
          std::string_view(k.tag) == c.tag && kernel_runnable(k))
        found = &k;
    if (found) return found;
  }
  return select_kernel(op, width, out_width, isa, operands);
}

}  // namespace

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
  const KernelInfo* found = nullptr;
  for (const KernelInfo& k : kernel_table())
    if (k.op == op && k.width == width && k.out_width == out_width && k.isa == isa && k.operands == operands &&
        kernel_runnable(k))
      found = &k;
  return found;
}

const KernelInfo* select_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  return select_memo().get(op, width, out_width, isa, operands, [&]() -> const KernelInfo* {
    for (int i = static_cast<int>(isa); i >= 0; --i)
      if (const KernelInfo* k = lookup_kernel(op, width, out_width, static_cast<Isa>(i), operands)) return k;
    return nullptr;
  });
}

const KernelInfo* dispatch_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  return dispatch_memo().get(op, width, out_width, isa, operands,
                             [&] { return find_dispatch_kernel(op, width, out_width, isa, operands); });
}

}  // namespace dmlbits
