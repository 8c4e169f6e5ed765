// The contract between the D3D12 backend (lib/src/d3d12) and the compute shaders (shaders/):
// which kernel programs exist, how they are bound, and what one thread computes.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <vector>

#include "dmlbits/ops.hpp"

namespace dmlbits::gpu {

// Threads per group (dcl_thread_group N, 1, 1): the one place it is chosen. 256 is the size
// hardware drivers' element-wise kernels use (8 warps of 32, 4 wavefronts of 64): whole SIMD
// units with several groups resident per multiprocessor. lavapipe runs 64 and 256 alike
// (testdata/benchmarks.md, "D3D12 kernels").
inline constexpr unsigned kThreadGroupSize = 256;
// Groups per dispatch: D3D12's limit on one dimension. Larger runs loop (see units below).
inline constexpr unsigned kMaxGroups = 65535;
inline constexpr unsigned kMaxRank = 8;

// One kernel program. Kernels are keyed by element width, not dtype: the ops act on raw bits.
struct KernelKey {
  OpKind op{};
  unsigned in_bits = 32;                               // element width of the inputs: 8, 16, 32 or 64
  unsigned out_bits = 32;                              // == in_bits, except popcount: 8 or 32
  ShiftOverflow shift_overflow = ShiftOverflow::zero;  // shl/shr only; zero for the others
  // false: every input is packed and has the output's shape, so element i of the output
  // reads element base+i of each input. true: element offsets come from sizes and strides.
  bool strided = false;
  auto operator<=>(const KernelKey&) const = default;
};

// Root constants at register b0 (space 0), 32-bit each, in this order.
struct KernelConstants {
  std::uint32_t count = 0;    // output elements computed by this dispatch
  std::uint32_t threads = 0;  // threads in the dispatch: groups * kThreadGroupSize
  std::uint32_t base[2]{};    // element index of this dispatch's first element in t0 / t1
  // Strided kernels only: the output's sizes right-aligned with leading 1s, and each input's
  // element strides (0 broadcasts) in the same positions.
  std::uint32_t sizes[kMaxRank]{};
  std::uint32_t strides[2][kMaxRank]{};
};
inline constexpr unsigned kConstantWords = sizeof(KernelConstants) / 4;
static_assert(sizeof(KernelConstants) == 112, "root constants must stay within 128 bytes");

// Bindings: t0 = input A and t1 = input B (binary ops only), raw buffers (ByteAddressBuffer);
// u0 = output, raw (RWByteAddressBuffer). Every buffer's size is a multiple of 4 bytes (8 for
// 64-bit output); input bytes past the data are unspecified.
// Packed kernels read their inputs in whole units, with no branch (lavapipe runs both sides of
// a branch): base[t] * (in_bits / 8) must be a multiple of 4, and input t's buffer must hold
// base[t] * (in_bits / 8) + output_units * unit_input_bytes(key) bytes, which a buffer padded to
// a multiple of kInputPaddingBytes does when base[t] is a multiple of 64 elements or 0 (the
// backend's chunks); the bytes past the data are read and their elements dropped.
//
// The output is written in units, each by one thread and no two sharing a word (no atomics):
//   packed kernels   16 bytes (four words, one ld_raw/store_raw of .xyzw): 128 / out_bits
//                    elements, read as whole words of each input where its first element is
//                    word-aligned
//   strided kernels  one 32-bit word of 32 / out_bits elements, or one 64-bit element
// The dispatch is one row of groups (Dispatch(groups, 1, 1), groups <= kMaxGroups); thread
// vThreadID.x writes units x, x + threads, x + 2 * threads, ... below output_units(key, count).
// Elements of the last unit past `count` are written as 0, so u0 must hold
// output_units * unit_bytes bytes.
std::uint32_t output_units(const KernelKey& key, std::uint32_t count);
// Bytes of one unit: 16 packed; 4 strided, 8 for 64-bit outputs.
unsigned unit_bytes(const KernelKey& key);
// Bytes of each input that one packed unit reads: 16 * in_bits / out_bits (4 to 128).
unsigned unit_input_bytes(const KernelKey& key);
inline constexpr unsigned kInputPaddingBytes = 128;  // the largest unit_input_bytes
// The dispatch for `count` outputs: groups (one row) and the root constant `threads`.
struct DispatchGrid {
  std::uint32_t groups = 0;
  std::uint32_t threads = 0;
};
DispatchGrid dispatch_grid(const KernelKey& key, std::uint32_t count);

// Every key the support table can need (all ops x widths x output widths x shift modes x
// strided), for tests and for building ahead of time.
std::vector<KernelKey> all_kernel_keys();
std::string to_string(const KernelKey& key);  // e.g. "shl_u16_wrap_strided", for file names and errors

// The kernel's DXBC container (Shader Model 5.0 compute shader), checksum included.
std::vector<std::uint8_t> build_kernel(const KernelKey& key);
// The same program as assembly text in the syntax fxc prints (for review and debugging).
std::string kernel_listing(const KernelKey& key);

}  // namespace dmlbits::gpu
