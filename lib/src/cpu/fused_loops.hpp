// Internal: the fused executor's register path (fused.hpp), per instruction set. A kernel file
// that has included kernel_loops.hpp, defined V, AndOp, OrOp, XorOp and a popcount block type
// `template <class T, class Out> FusedPopcnt` (its PopcntOp with its best counter) includes this
// header and lists FusedLoopRows for the widths it has.
//
// Why: the tile path runs one kernel per node over a tile, so the inputs are read in bursts
// (the first node's kernel) between stretches of work on the tile buffers, and a run in memory
// read about a third slower than one kernel (testdata/benchmarks.md, "Fused expressions
// (CPU)"). Here every node runs on a block of 256 bytes of the program's width before the next
// block, so the inputs are read at an even pace, and the output is stored once (non-temporal
// for large outputs), as one kernel reads and writes memory. No software prefetch: on the AMD
// host every distance from 512 B to 4 KiB was slower than the hardware prefetchers alone (the
// same section). The ops are the kernels' own (AndOp, V::shift, FusedPopcnt, ...), so the
// results are the kernels' bit for bit; and_not is AndOp and V::bit_not together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kernels.hpp"

#ifndef DMLBITS_TARGET
#error "define DMLBITS_TARGET before including fused_loops.hpp"
#endif

namespace dmlbits::cpu {
namespace {

template <class V, class T, FusedCode C>
DMLBITS_TARGET inline typename V::reg fused_apply(typename V::reg x, typename V::reg y) {
  using Mode = ShiftOverflow;
  if constexpr (C == FusedCode::bit_and) return AndOp<V, T, Mode::zero>::apply(x, y);
  else if constexpr (C == FusedCode::bit_or) return OrOp<V, T, Mode::zero>::apply(x, y);
  else if constexpr (C == FusedCode::bit_xor) return XorOp<V, T, Mode::zero>::apply(x, y);
  else if constexpr (C == FusedCode::bit_not) return V::bit_not(x);
  else if constexpr (C == FusedCode::and_not) return AndOp<V, T, Mode::zero>::apply(x, V::bit_not(y));
  else if constexpr (C == FusedCode::shl_zero) return V::template shift<true, T, Mode::zero>(x, y);
  else if constexpr (C == FusedCode::shl_wrap) return V::template shift<true, T, Mode::wrap>(x, y);
  else if constexpr (C == FusedCode::shl_directml) return V::template shift<true, T, Mode::directml>(x, y);
  else if constexpr (C == FusedCode::shr_zero) return V::template shift<false, T, Mode::zero>(x, y);
  else if constexpr (C == FusedCode::shr_wrap) return V::template shift<false, T, Mode::wrap>(x, y);
  else return V::template shift<false, T, Mode::directml>(x, y);
}

// One node on the block at `a` and `b` (`b` is read, and ignored, by `not`) into `dst`,
// through store kind S.
template <class V, class T, class S, FusedCode C>
DMLBITS_TARGET inline void fused_each(const std::byte* a, const std::byte* b, std::byte* dst) {
  constexpr std::size_t kVectors = kFusedBlockBytes / V::kBytes;
#pragma GCC unroll 8
  for (std::size_t j = 0; j < kVectors; ++j)
    S::store_vector(dst + j * V::kBytes, fused_apply<V, T, C>(V::load(a + j * V::kBytes), V::load(b + j * V::kBytes)));
}

template <class V, class T, class S>
DMLBITS_TARGET inline void fused_node(FusedCode code, const std::byte* a, const std::byte* b, std::byte* dst) {
  switch (code) {
    case FusedCode::bit_and:
      return fused_each<V, T, S, FusedCode::bit_and>(a, b, dst);
    case FusedCode::bit_or:
      return fused_each<V, T, S, FusedCode::bit_or>(a, b, dst);
    case FusedCode::bit_xor:
      return fused_each<V, T, S, FusedCode::bit_xor>(a, b, dst);
    case FusedCode::bit_not:
      return fused_each<V, T, S, FusedCode::bit_not>(a, b, dst);
    case FusedCode::shl_zero:
      return fused_each<V, T, S, FusedCode::shl_zero>(a, b, dst);
    case FusedCode::shl_wrap:
      return fused_each<V, T, S, FusedCode::shl_wrap>(a, b, dst);
    case FusedCode::shl_directml:
      return fused_each<V, T, S, FusedCode::shl_directml>(a, b, dst);
    case FusedCode::shr_zero:
      return fused_each<V, T, S, FusedCode::shr_zero>(a, b, dst);
    case FusedCode::shr_wrap:
      return fused_each<V, T, S, FusedCode::shr_wrap>(a, b, dst);
    case FusedCode::shr_directml:
      return fused_each<V, T, S, FusedCode::shr_directml>(a, b, dst);
    case FusedCode::and_not:
      return fused_each<V, T, S, FusedCode::and_not>(a, b, dst);
    case FusedCode::popcount:  // only as the last node, in fused_blocks
    case FusedCode::skip:
      break;
  }
}

// The blocks [begin, end) (whole blocks of kFusedBlockBytes / sizeof(T) elements) of a program
// whose nodes are all T-wide, the last one a popcount into Out if kPopcount; `out` is element 0
// of the output, aligned to 64 bytes at `begin` if S streams.
template <class V, class T, class Out, bool kPopcount, class S>
DMLBITS_TARGET void fused_blocks(const FusedLoopArgs& args) {
  constexpr std::size_t kBlock = kFusedBlockBytes / sizeof(T);
  const std::size_t last = args.step_count - 1;
  for (std::uint64_t pos = args.begin; pos < args.end; pos += kBlock) {
    for (std::size_t k = 0; k < last; ++k) {
      const FusedLoopStep& s = args.steps[k];
      fused_node<V, T, typename V::Stored>(s.code, s.a.at(pos * sizeof(T)), s.b.at(pos * sizeof(T)), s.dst);
    }
    const FusedLoopStep& s = args.steps[last];
    if constexpr (kPopcount) {
      using Pop = FusedPopcnt<T, Out>;
      static_assert(kBlock % Pop::kElems == 0);
      const std::byte* in = s.a.at(pos * sizeof(T));
      std::byte* o = args.out + pos * sizeof(Out);
#pragma GCC unroll 8
      for (std::size_t e = 0; e < kBlock; e += Pop::kElems)
        Pop::template block<S>(in + e * sizeof(T), o + e * sizeof(Out));
    } else {
      fused_node<V, T, S>(s.code, s.a.at(pos * sizeof(T)), s.b.at(pos * sizeof(T)), args.out + pos * sizeof(T));
    }
  }
  if constexpr (std::is_same_v<S, typename V::Streaming>) V::fence();
}

template <class V, class T, class Out, bool kPopcount>
DMLBITS_TARGET void fused_loop(const FusedLoopArgs& args) {
  if (args.stream) fused_blocks<V, T, Out, kPopcount, typename V::Streaming>(args);
  else fused_blocks<V, T, Out, kPopcount, typename V::Stored>(args);
}

}  // namespace
}  // namespace dmlbits::cpu

// A row for programs of T-wide nodes: ending in a popcount into OUT, or (OUT void) not.
#define DMLBITS_FUSED_ROW(T) \
  ::dmlbits::cpu::FusedLoopRow { sizeof(T), sizeof(T), false, &::dmlbits::cpu::fused_loop<V, T, T, false> }
#define DMLBITS_FUSED_POPCOUNT_ROW(T, OUT) \
  ::dmlbits::cpu::FusedLoopRow { sizeof(T), sizeof(OUT), true, &::dmlbits::cpu::fused_loop<V, T, OUT, true> }
// Every row of a set whose own counter serves every width (AVX2, AVX-512F): programs of each
// width, plain or ending in a popcount into uint8 or uint32.
#define DMLBITS_FUSED_ROWS                                                                             \
  DMLBITS_FUSED_ROW(std::uint8_t), DMLBITS_FUSED_ROW(std::uint16_t), DMLBITS_FUSED_ROW(std::uint32_t), \
      DMLBITS_FUSED_ROW(std::uint64_t), DMLBITS_FUSED_POPCOUNT_ROW(std::uint8_t, std::uint8_t),        \
      DMLBITS_FUSED_POPCOUNT_ROW(std::uint8_t, std::uint32_t),                                         \
      DMLBITS_FUSED_POPCOUNT_ROW(std::uint16_t, std::uint8_t),                                         \
      DMLBITS_FUSED_POPCOUNT_ROW(std::uint16_t, std::uint32_t),                                        \
      DMLBITS_FUSED_POPCOUNT_ROW(std::uint32_t, std::uint8_t),                                         \
      DMLBITS_FUSED_POPCOUNT_ROW(std::uint32_t, std::uint32_t),                                        \
      DMLBITS_FUSED_POPCOUNT_ROW(std::uint64_t, std::uint8_t),                                         \
      DMLBITS_FUSED_POPCOUNT_ROW(std::uint64_t, std::uint32_t)
