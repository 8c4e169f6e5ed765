// The fused CPU executor (issue #46): a graph of the bitwise operators run in one pass, by one
// of two paths. The register path, for programs whose nodes are all of one width (the last
// perhaps a popcount into uint8 or uint32) on the SIMD sets: every node runs on a block of 256
// bytes before the next block, the ops inlined (fused_loops.hpp), so the inputs are read and
// the output written at one even pace, as a single kernel does. The tiles, for the rest (and
// the few elements before and after the register path's whole blocks): the output is cut into
// tiles of a few KiB per thread; on each tile every node's SIMD kernel (the kernel table's,
// chosen as CpuBackend chooses them) runs in turn, reading the inputs' runs and earlier nodes'
// tile buffers, which stay in L1/L2, and the last node writes straight into the output. Results
// are byte for byte those of evaluating the nodes element by element with the operator table's
// reference functions (OpInfo::reference), which tests/unit/fused_test.cpp checks for both.
//
// This is the executor only: a FusedProgram is taken as built by a caller that has validated the
// graph (the run layer translates a validated graph into one). The constructor refuses, with
// Errc::internal, only what would make the executor read or write out of bounds or compute
// nonsense (operands of other widths, references to later nodes, indices out of range).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits {

// An operand of a node.
struct FusedValue {
  enum class Kind : std::uint8_t { input, node, constant };
  Kind kind{};
  std::uint32_t index = 0;  // input: the graph input; node: an earlier node
  std::uint64_t bits = 0;   // constant: the element's raw bits, zero-extended (at most its width's)
};

struct FusedNode {
  OpKind op{};
  std::uint8_t width = 0;      // element bytes of the operands: 1, 2, 4 or 8
  std::uint8_t out_width = 0;  // element bytes of the result: `width`, or popcount's count (1, 2, 4 or 8)
  FusedValue a, b;             // b unused for unary operators; both operands are `width` wide
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
};

struct FusedProgram {
  std::vector<FusedNode> nodes;            // topological; the last one's output is the result
  std::vector<std::uint8_t> input_widths;  // per graph input, in bytes
  std::vector<bool> input_is_scalar;       // per graph input: one element broadcast over the whole run
};

// At most this many nodes in a program.
inline constexpr std::size_t kMaxFusedNodes = 256;

// The bytes of the widest tile buffer: a few buffers stay in L1. On the AVX-512 host no size from
// 1 KiB to 1 MiB was faster beyond the noise of a loaded machine (testdata/benchmarks.md, "Fused
// expressions (CPU)"); re-measure on a quiet one.
inline constexpr std::size_t kFusedTileBytes = std::size_t{8} << 10;

struct FusedOptions {
  // Bytes of the widest value per tile (rounded down to whole 64-element groups, at least 64
  // elements). Benchmarks and tests vary it.
  std::size_t tile_bytes = kFusedTileBytes;
  // Outputs of at least this many bytes (the whole output of a run, not a tile) are written with
  // non-temporal stores, as a single operator's kernel writes them (KernelParams). Tests lower it
  // to cover that path.
  std::size_t stream_min_bytes = KernelParams{}.stream_min_bytes;
  // The register path (see FusedRunner): taken where the program has one and the output is at
  // least register_min_bytes (the whole output of a run); tests and benchmarks turn it off to
  // run the tiles alone, and lower the bound to run it on small outputs. In the caches the
  // tiles were as fast or faster (the register path pays a dispatch per node per 256-byte
  // block), in memory the register path 1.3-2x faster (testdata/benchmarks.md, "Fused
  // expressions (CPU)"), so the bound is the one past which outputs stream.
  bool register_path = true;
  std::size_t register_min_bytes = KernelParams{}.stream_min_bytes;
};

class FusedRunner {
 public:
  // Kernels are chosen once for `isa` (throws Errc::unsupported if this CPU cannot run it): with
  // `per_operation_choice` as CpuBackend without a named set (dispatch_kernel), else that set's
  // kernels or narrower ones' (select_kernel); a node with no kernel for its layout runs its
  // reference function per element. The register path, where the program has one, is `isa`'s
  // (AVX2 or AVX-512, its popcount with the extensions this CPU has) whatever the choice.
  // Nodes whose operands are all constants are computed here with their reference functions and
  // become constants; nodes the result does not use are dropped. Throws Errc::internal for a
  // malformed program (see the file comment).
  FusedRunner(FusedProgram program, Isa isa, bool per_operation_choice, FusedOptions options = {});
  ~FusedRunner();
  FusedRunner(FusedRunner&&) noexcept;
  FusedRunner& operator=(FusedRunner&&) noexcept;

  // Computes n output elements. inputs[i] points at n elements of input_widths[i] bytes, or at
  // one if input_is_scalar[i] (nodes over constants and scalar inputs alone are computed once
  // per run); `out` at n elements of the last node's out_width. No alignment is needed; `out`
  // must not overlap an input. A chunk of a longer run is computed by offsetting the pointers of
  // the non-scalar inputs and of `out`. On `threads` threads (0 and 1: the calling thread), each
  // computing one contiguous part of the output, split on 64-element boundaries so that no
  // output cache line is written by two; a thread that cannot be started has its part done by
  // the calling thread. The caller picks the count (CpuBackend::thread_count for the run's
  // bytes): the executor starts as many as asked where there are 64-element parts to give.
  // Throws Errc::internal if inputs.size() is not the program's input count.
  void run(std::uint64_t n, std::span<const void* const> inputs, void* out, unsigned threads) const;

  // Elements per tile.
  std::size_t tile_elements() const;
  // Nodes that run per tile (after folding and dropping unused ones), and tile buffers per thread.
  std::size_t kernel_nodes() const;
  std::size_t tile_buffers() const;
  // Whether whole blocks run on the register path (for outputs of at least register_min_bytes).
  bool register_path() const;

 private:
  struct Plan;
  static void choose_loop(Plan& p, Isa isa);
  std::unique_ptr<Plan> plan_;
};

}  // namespace dmlbits
