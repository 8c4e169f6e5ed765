// Fused graph kernels (issue #46): one compute shader for a whole flat graph of the bitwise
// operators, each output element computed from its inputs' elements with every node's value in
// registers, so that a graph costs one pass over memory instead of one per node. The contract
// with the D3D12 backend, beside gpu_kernel.hpp's for single operators:
//
// Leaves. A graph's inputs and constants are its leaves, each either a buffer of the output's
// element count (packed, element i of the output reads its element i) or one element broadcast
// to every output (scalar). Buffer leaves are bound in leaf order to t0, t1, ... (at most
// kGraphMaxBuffers), raw, base 0: each must hold its elements padded with anything to a
// multiple of kInputPaddingBytes. Scalar leaves are root constants (GraphConstants::scalars),
// in leaf order, one word each (zero-extended), two (low word first) for 64-bit elements.
//
// Output. u0, raw, written in packed units of 16 bytes (128 / out_bits elements), one unit per
// thread iteration as gpu_kernel.hpp's packed kernels do (grid-stride loop over
// graph_output_units); elements of the last unit past `count` are left unspecified (the backend
// reads back `count` elements). So u0 must hold graph_output_units * 16 bytes.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "gpu_kernel.hpp"

namespace dmlbits::gpu {

inline constexpr unsigned kGraphMaxBuffers = 8;    // t0..t7
inline constexpr unsigned kGraphScalarWords = 26;  // root constants left after count and threads

// Root constants at b0 of a graph kernel (the same 28 words as KernelConstants).
struct GraphConstants {
  std::uint32_t count = 0;    // output elements computed by this dispatch
  std::uint32_t threads = 0;  // threads in the dispatch: groups * kThreadGroupSize
  std::uint32_t scalars[kGraphScalarWords]{};
};
static_assert(sizeof(GraphConstants) == sizeof(KernelConstants), "graph kernels take the kernels' root constants");

struct GraphLeafKey {
  unsigned bits = 32;   // element width: 8, 16, 32 or 64
  bool scalar = false;  // one element, broadcast (a root constant); else a buffer
  auto operator<=>(const GraphLeafKey&) const = default;
};

// Where a node's operand comes from: a leaf or an earlier node.
struct GraphArgKey {
  bool node = false;
  std::uint32_t index = 0;
  auto operator<=>(const GraphArgKey&) const = default;
};

struct GraphNodeKey {
  OpKind op{};
  unsigned in_bits = 32;
  unsigned out_bits = 32;                              // in_bits except popcount (8 or 32)
  ShiftOverflow shift_overflow = ShiftOverflow::zero;  // shl/shr only
  std::array<GraphArgKey, 2> args{};                   // op_info(op).arity of them; the rest zero
  auto operator<=>(const GraphNodeKey&) const = default;
};

// The shape of a graph as one program: what the kernel is built and cached by.
struct GraphKernelKey {
  std::vector<GraphLeafKey> leaves;
  std::vector<GraphNodeKey> nodes;  // topological; the last is the output
  auto operator<=>(const GraphKernelKey&) const = default;
};

// Why `key` cannot be one graph kernel (too many buffers or scalar words, an operator without a
// shader, operand widths that disagree, an operand that is no earlier node or leaf), or the
// empty string when it can.
std::string graph_kernel_refusal(const GraphKernelKey& key);
unsigned graph_out_bits(const GraphKernelKey& key);
unsigned graph_buffer_count(const GraphKernelKey& key);
std::uint32_t graph_output_units(const GraphKernelKey& key, std::uint32_t count);
DispatchGrid graph_dispatch_grid(const GraphKernelKey& key, std::uint32_t count);
// "graph_4n_2b1s_u8", for pipelines' error messages.
std::string to_string(const GraphKernelKey& key);

// A few graphs that together use every family, element width, count width and shift mode,
// scalars of every width, eight buffers and none, for tests of the bytecode (dump_kernels).
std::vector<GraphKernelKey> example_graph_kernel_keys();

// The kernel's DXBC container; throws Errc::internal for a key graph_kernel_refusal refuses.
std::vector<std::uint8_t> build_graph_kernel(const GraphKernelKey& key);
std::string graph_kernel_listing(const GraphKernelKey& key);

}  // namespace dmlbits::gpu
