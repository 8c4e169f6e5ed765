// Internal: the rows each kernel file contributes to the kernel table (kernel_table.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "cpu_backend.hpp"

namespace dmlbits::cpu {

struct KernelRow {
  // In the order the row macros give them; the key is worked out here, where the rows are
  // compiled, so that filling the kernel choice tables at a run's first dispatch costs a few
  // instructions a row. Narrow fields keep a row at 24 bytes: its two pointers are relocated at
  // every start.
  constexpr KernelRow(OpKind kind, unsigned in_bytes, unsigned out_bytes, Operands layout, Isa set, CpuExtension needs,
                      const char* name_tag, KernelFn kernel)
      : op(kind),
        width(static_cast<std::uint8_t>(in_bytes)),
        out_width(static_cast<std::uint8_t>(out_bytes)),
        operands(layout),
        isa(set),
        extension(needs),
        key(static_cast<std::uint16_t>(kernel_key(kind, in_bytes, out_bytes, layout))),
        tag(name_tag),
        fn(kernel) {}

  OpKind op;
  std::uint8_t width;      // input element bytes
  std::uint8_t out_width;  // output element bytes
  Operands operands;
  Isa isa;
  CpuExtension extension;
  std::uint16_t key;  // the row's slot in the kernel choice tables (kernel_key); kKernelKeys: none
  const char* tag;    // the name's suffix after "__": "avx2", "scalar_popcnt"
  KernelFn fn;
};
static_assert(kKernelKeys < UINT16_MAX, "KernelRow::key holds every key and kKernelKeys");

// Whether every row is of set `isa` and has a slot in the kernel choice tables: each kernel file
// static_asserts it of its rows, which kernel_table.cpp gathers in the order of their sets.
constexpr bool rows_of_set(std::span<const KernelRow> rows, Isa isa) {
  for (const KernelRow& r : rows)
    if (r.isa != isa || r.key >= kKernelKeys) return false;
  return true;
}

// One function per kernel file. Calling them runs no instruction of the file's set: they only
// return addresses.
std::span<const KernelRow> scalar_kernels();
std::span<const KernelRow> avx2_kernels();
std::span<const KernelRow> avx512_kernels();
std::span<const KernelRow> avx512_vpopcntdq_kernels();
std::span<const KernelRow> avx512_bitalg_kernels();

// The fused executor's register path (fused_loops.hpp): every node of a program on one block of
// kFusedBlockBytes of the program's width before the next block.
enum class FusedCode : std::uint8_t {
  bit_and,
  bit_or,
  bit_xor,
  bit_not,
  shl_zero,
  shl_wrap,
  shl_directml,
  shr_zero,
  shr_wrap,
  shr_directml,
  popcount,  // the last node only
  and_not,   // a & ~b
  skip,      // nothing: a `not` that an and_not does instead
};
inline constexpr std::size_t kFusedBlockBytes = 256;

// A node's operand: a run (advancing with the block), or a block that stays (an earlier node's
// block buffer, or a uniform value repeated over a block).
struct FusedOperand {
  const std::byte* base = nullptr;
  bool advances = false;
  const std::byte* at(std::uint64_t offset) const { return advances ? base + offset : base; }
};

struct FusedLoopStep {
  FusedCode code{};
  FusedOperand a, b;         // b: a valid block for unary nodes too (read and ignored)
  std::byte* dst = nullptr;  // a block buffer; unused by the last step, which writes the output
};

struct FusedLoopArgs {
  const FusedLoopStep* steps = nullptr;
  std::size_t step_count = 0;
  std::uint64_t begin = 0, end = 0;  // elements, whole blocks
  std::byte* out = nullptr;          // element 0 of the output
  bool stream = false;               // non-temporal stores: out + begin is aligned to 64 bytes
};
using FusedLoopFn = void (*)(const FusedLoopArgs&);

// A loop for programs whose nodes are all `width` bytes wide, the last one a popcount into
// `out_width` bytes if `popcount`.
struct FusedLoopRow {
  std::uint8_t width = 0, out_width = 0;
  bool popcount = false;
  FusedLoopFn fn = nullptr;
};

std::span<const FusedLoopRow> avx2_fused_loops();
std::span<const FusedLoopRow> avx512_fused_loops();
std::span<const FusedLoopRow> avx512_vpopcntdq_fused_loops();
std::span<const FusedLoopRow> avx512_bitalg_fused_loops();

}  // namespace dmlbits::cpu
