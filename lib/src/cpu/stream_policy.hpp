// Internal: how the SIMD kernels stream large outputs, one policy per instruction set.
//
// A kernel whose output is at least KernelParams::stream_min_bytes streams: it writes with
// non-temporal stores (past the caches, as memcpy does for large copies), and reads its inputs
// the way its instruction set's policy names. Below that size every kernel takes the same plain
// loop, and the policy plays no part. The kernel files pass each table row the plan its policy
// gives for the row's operation and widths (kernel_loops.hpp, DMLBITS_BINARY_ROW and
// DMLBITS_UNARY_ROW), so what a kernel does is read here, not inferred from its operation type.
//
// Every constant was chosen by measurement; the figures are in testdata/benchmarks.md, section
// "CPU streaming policies", under the name of the constant. Changing one is a benchmark
// question, not a correctness one: tests/unit/cpu_backend_test.cpp runs every plan, at sizes
// checked against these policies (StreamPoliciesTest).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "cpu_isa.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits::cpu {

// Vectors (or unary blocks) per step of the SIMD loops (kernel_loops.hpp), for every
// instruction set: the streaming paths prefetch once per step, and a step of four 64-byte
// vectors is four cache lines. Not a per-set policy constant: GCC 12 fails (internal compiler
// error) on a template-dependent count in `#pragma GCC unroll`; no other count was measured
// ("kUnroll").
constexpr std::size_t kUnroll = 4;

// A binary kernel's streaming: both inputs read in one pass, each prefetched `prefetch_bytes`
// ahead of the loads (0: no software prefetch, the hardware prefetchers alone).
struct BinaryStream {
  std::size_t prefetch_bytes = 0;
};

// How a streaming unary kernel walks its input.
enum class UnaryRead : std::uint8_t {
  // `lanes` neighbouring 4 KiB spans of the input side by side, each read prefetching the same
  // place in the next group of spans (`prefetch_bytes` = lanes x 4 KiB). Each block reads and
  // writes one place, so in-place operations are safe.
  pages,
  // The input cut into `lanes` contiguous parts read side by side, each prefetched
  // `prefetch_bytes` ahead. Part h writes output that part h - 1 may read as input, so only
  // for narrowing operations (popcount), which never run in place.
  parts,
};

struct UnaryStream {
  UnaryRead read = UnaryRead::pages;
  std::size_t lanes = 1;
  std::size_t prefetch_bytes = 0;
  // The blocks left after the last whole group of lanes, read as one stream prefetched this far
  // ahead.
  std::size_t rest_prefetch_bytes = 0;

  friend constexpr bool operator==(const UnaryStream&, const UnaryStream&) = default;
};

// The makers a unary plan may depend on (every value of CpuVendor), for the tests and benchmarks
// that run each maker's plan.
inline constexpr CpuVendor kCpuVendors[] = {CpuVendor::other, CpuVendor::intel, CpuVendor::amd};

// Both policies answer the same two questions: binary(op, width) for and/or/xor/shl/shr of
// `width`-byte elements, unary(in_width, out_width, vendor) for not and popcount on a CPU of
// that maker (unary_kernel asks cpu_vendor() when it streams; KernelParams::vendor overrides it,
// so that tests run every maker's plan on any host).
//
// Where a plan depends on the maker, it is because two hosts measured differently, and a plan
// for a maker stands on the one host of it measured (named at the figures); `other` takes the
// plan that was measured first.

struct Avx2StreamPolicy {
  // Shared by the long blocks: 2 KiB beat 0.5-8 KiB on the AVX2 host ("kPrefetchBytes").
  static constexpr std::size_t kPrefetchBytes = 2048;

  static constexpr BinaryStream binary(OpKind op, unsigned width) {
    // 8- and 16-bit shifts are emulated (several instructions per vector) and read too slowly
    // without a prefetch; a one-instruction and/xor lost with one ("Avx2StreamPolicy::binary").
    const bool shift = op == OpKind::shl || op == OpKind::shr;
    return {.prefetch_bytes = shift && width <= 2 ? kPrefetchBytes : 0};
  }
  static constexpr UnaryStream unary(unsigned in_width, unsigned out_width, CpuVendor /*vendor*/) {
    // Four pages suit the popcounts that change the width; same-width ones collapsed with four
    // (4 KiB aliasing between loads and stores, likely) and read best from two
    // ("Avx2StreamPolicy::unary").
    const std::size_t lanes = in_width != out_width ? 4 : 2;
    return {.read = UnaryRead::pages,
            .lanes = lanes,
            .prefetch_bytes = lanes * 4096,
            .rest_prefetch_bytes = kPrefetchBytes};
  }
};

struct Avx512StreamPolicy {
  static constexpr std::size_t kPrefetchBytes = 2048;  // the rest of a unary input, as AVX2's

  static constexpr BinaryStream binary(OpKind op, unsigned /*width*/) {
    // One thread kept too few line reads in flight without a prefetch; a shift, several
    // instructions per vector, wants it further ahead than and/or/xor
    // ("Avx512StreamPolicy::binary": 1 KiB and 3 KiB were the best measured).
    const bool shift = op == OpKind::shl || op == OpKind::shr;
    return {.prefetch_bytes = shift ? std::size_t{3072} : std::size_t{1024}};
  }
  static constexpr UnaryStream unary(unsigned in_width, unsigned out_width, CpuVendor vendor) {
    // Narrowing popcounts (2-8 bytes read per byte written) are bound by one thread's reads,
    // which are fastest from several distant streams; the others from neighbouring pages, four
    // for widening ones ("Avx512StreamPolicy::unary"). Same-width ones (not, popcount into its
    // own width) read best from eight pages on the Intel host and from four on the AMD one
    // (Zen 4), so the count is the maker's (testdata/benchmarks.md, "Avx512StreamPolicy::unary,
    // by maker", has the figures).
    if (in_width > out_width)
      return {.read = UnaryRead::parts, .lanes = 4, .prefetch_bytes = 512, .rest_prefetch_bytes = kPrefetchBytes};
    const std::size_t lanes = in_width == out_width && vendor != CpuVendor::amd ? 8 : 4;
    return {.read = UnaryRead::pages,
            .lanes = lanes,
            .prefetch_bytes = lanes * 4096,
            .rest_prefetch_bytes = kPrefetchBytes};
  }
};

// One maker for each different plan a unary operation of these widths has on set `isa` (the
// first maker of kCpuVendors with that plan; none for the scalar set, which does not stream),
// so that tests and benchmarks run every plan on any host.
inline std::vector<CpuVendor> makers_of_each_unary_plan(Isa isa, unsigned in_width, unsigned out_width) {
  std::vector<CpuVendor> makers;
  if (isa == Isa::scalar) return makers;
  std::vector<UnaryStream> plans;
  for (const CpuVendor vendor : kCpuVendors) {
    const UnaryStream plan = isa == Isa::avx512 ? Avx512StreamPolicy::unary(in_width, out_width, vendor)
                                                : Avx2StreamPolicy::unary(in_width, out_width, vendor);
    if (std::find(plans.begin(), plans.end(), plan) != plans.end()) continue;
    plans.push_back(plan);
    makers.push_back(vendor);
  }
  return makers;
}

}  // namespace dmlbits::cpu
