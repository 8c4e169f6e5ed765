// The kernel table: every kernel file's rows, named, and the dispatch from (operation, width,
// instruction set, operand layout) to the kernel to run.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "kernels.hpp"

namespace dmlbits {
namespace {

std::string_view operands_suffix(Operands o) {
  switch (o) {
    case Operands::vectors:
      return "";
    case Operands::b_scalar:
      return "_c";
    case Operands::a_scalar:
      return "_rc";
  }
  return "";
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

// Each kChoices row's first key (Operands::vectors; the other layouts follow it).
constexpr auto kChoiceKeys = [] {
  std::array<std::size_t, kChoices.size()> keys{};
  for (std::size_t c = 0; c < kChoices.size(); ++c)
    keys[c] = kernel_key(kChoices[c].op, kChoices[c].width, kChoices[c].out_width, Operands{});
  return keys;
}();
constexpr bool choices_have_keys() {
  for (std::size_t c = 0; c < kChoices.size(); ++c)
    if (kChoiceKeys[c] >= kKernelKeys || static_cast<std::size_t>(kChoices[c].host) >= kIsaCount) return false;
  return true;
}
static_assert(choices_have_keys(), "each kChoices row names an operation, widths and host set the tables have");

// Whether this CPU runs a kernel of set `isa` needing `extension`, given what it has.
bool runs(Isa isa, CpuExtension extension, Isa host, const CpuFeatures& f) {
  if (isa > host) return false;
  switch (extension) {
    case CpuExtension::none:
      return true;
    case CpuExtension::popcnt:
      return f.popcnt;
    case CpuExtension::avx512vpopcntdq:
      return f.avx512vpopcntdq;
    case CpuExtension::avx512bitalg:
      return f.avx512bitalg;
  }
  return false;
}

// A slot holds one more than a kernel's position in the kernel table, or 0 for none: the rows
// come in the order of their sets (the constructor), so the widest set's kernel at or below a set,
// and its preferred one (the last), is the slot with the greatest value. Bytes keep both kinds
// of table for every set within one page, aligned below (a run's first dispatch writes them
// all, and each fresh page it writes is a fault: dear on a virtual machine).
using Slot = std::uint8_t;
using SlotRow = std::array<Slot, kKernelKeys>;  // one set's slots, by kernel_key()
constexpr std::size_t kTablesBytes = 2 * kIsaCount * sizeof(SlotRow) + sizeof(std::vector<KernelInfo>);

// Every kernel, and the kernels select_kernel and dispatch_kernel answer with for every key and
// set, built once, at the first of them or of kernel_table(), so that a lookup is an index: a
// 4x4 operation once spent longer finding its kernel, a walk of the whole table per set, than
// running it. The instruction-set overrides (DMLBITS_ISA, force_isa) only change which set's
// row a backend reads, never the rows.
// Built in place, in the static storage of tables(): an over-aligned object is never on the stack
// (MinGW's GCC does not realign the stack for it).
struct alignas(std::min<std::size_t>(std::bit_ceil(kTablesBytes), 4096)) KernelTables {
  KernelTables();
  std::array<SlotRow, kIsaCount> select{};  // the kernel of the widest set at or below the row's
  std::array<SlotRow, kIsaCount> dispatch;  // select's, with kChoices' rows for that host set
  std::vector<KernelInfo> kernels;          // kernel_table()
};

KernelTables::KernelTables() {
  // Order matters: within one (op, width, set, operands), later rows are preferred; and the
  // files come in the order of their sets, narrowest first (each file's rows are of one set and
  // have slots: kernels.hpp, rows_of_set).
  const auto files = {cpu::scalar_kernels(), cpu::avx2_kernels(), cpu::avx512_kernels(),
                      cpu::avx512_vpopcntdq_kernels(), cpu::avx512_bitalg_kernels()};
  std::size_t rows_count = 0;
  for (auto rows : files) rows_count += rows.size();
  if (rows_count > std::numeric_limits<Slot>::max())
    throw Error(Errc::internal, fmt::format("kernel_table.cpp: {} kernels do not fit a Slot: widen it", rows_count));
  // Sized once: growing it row by row left a trail of freed copies that took the heap over fresh
  // pages, each a page fault (dear on a virtual machine: testdata/benchmarks.md, "Fourth pass").
  kernels.resize(rows_count);
  // kChoices' kernels, by row and operand layout: the last runnable row of the key with the tag.
  std::array<std::array<Slot, kOperandsCount>, kChoices.size()> choice_slots{};
  const Isa host = host_isa();
  const CpuFeatures& features = cpu_features();
  std::size_t i = 0;
  for (auto rows : files) {
    for (const cpu::KernelRow& r : rows) {
      KernelInfo& k = kernels[i++];
      k.op = r.op;
      k.width = r.width;
      k.out_width = r.out_width;
      k.operands = r.operands;
      k.isa = r.isa;
      k.extension = r.extension;
      k.fn = r.fn;
      k.tag = r.tag;
      if (!runs(r.isa, r.extension, host, features)) continue;
      // Each set's own preferred kernel: the last runnable row.
      select[static_cast<std::size_t>(r.isa)][r.key] = static_cast<Slot>(i);
      for (std::size_t c = 0; c < kChoices.size(); ++c)
        if (r.key - kChoiceKeys[c] < kOperandsCount && std::string_view(r.tag) == kChoices[c].tag)
          choice_slots[c][r.key - kChoiceKeys[c]] = static_cast<Slot>(i);
    }
  }
  // A set without its own kernel for a key takes the nearest narrower set's.
  for (std::size_t s = 1; s < kIsaCount; ++s)
    for (std::size_t key = 0; key < kKernelKeys; ++key) select[s][key] = std::max(select[s][key], select[s - 1][key]);
  // The measured exceptions, for every operand layout of their operation. Where two rows named
  // one key the first whose kernel runs would win, so they are written last to first.
  dispatch = select;
  for (std::size_t c = kChoices.size(); c-- > 0;) {
    const auto host_set = static_cast<std::size_t>(kChoices[c].host);
    for (std::size_t o = 0; o < kOperandsCount; ++o)
      if (choice_slots[c][o] != 0) dispatch[host_set][kChoiceKeys[c] + o] = choice_slots[c][o];
  }
}

// Both `inline` so that GCC folds them into select_kernel and dispatch_kernel, which a run calls
// once: as calls, they made a 4x4 run through CpuBackend::run measurably slower
// (testdata/benchmarks.md, "Issue #45 item 2").
inline const KernelTables& tables() {
  static const KernelTables t;
  return t;
}

inline const KernelInfo* chosen(const KernelTables& t, const std::array<SlotRow, kIsaCount>& rows, OpKind op,
                                unsigned width, unsigned out_width, Isa isa, Operands operands) {
  const std::size_t key = kernel_key(op, width, out_width, operands);
  if (key == kKernelKeys || static_cast<std::size_t>(isa) >= kIsaCount) return nullptr;  // not a kernel's key
  const Slot slot = rows[static_cast<std::size_t>(isa)][key];
  return slot == 0 ? nullptr : &t.kernels[slot - 1];
}

}  // namespace

std::span<const KernelChoice> kernel_choices() { return kChoices; }

std::string kernel_op_name(OpKind op, unsigned out_width) {
  const OpInfo& info = op_info(op);
  if (info.output_dtype_is_input_dtype()) return std::string(info.kernel_name);
  return fmt::format("{}_u{}", info.kernel_name, out_width * 8);
}

std::string kernel_name(const KernelInfo& k) {
  return fmt::format("x{}_{}{}__{}", k.width * 8, kernel_op_name(k.op, k.out_width), operands_suffix(k.operands),
                     k.tag);
}

std::span<const KernelInfo> kernel_table() { return tables().kernels; }

bool kernel_runnable(const KernelInfo& k) { return runs(k.isa, k.extension, host_isa(), cpu_features()); }

const KernelInfo* lookup_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  // select_kernel's answer is the set's own kernel whenever it has one.
  const KernelInfo* k = select_kernel(op, width, out_width, isa, operands);
  return k != nullptr && k->isa == isa ? k : nullptr;
}

const KernelInfo* select_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  const KernelTables& t = tables();
  return chosen(t, t.select, op, width, out_width, isa, operands);
}

const KernelInfo* dispatch_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  const KernelTables& t = tables();
  return chosen(t, t.dispatch, op, width, out_width, isa, operands);
}

}  // namespace dmlbits
