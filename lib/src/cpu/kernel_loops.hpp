// Internal: the loops every SIMD kernel file shares. A kernel file defines DMLBITS_TARGET (its
// function attribute, e.g. __attribute__((target("avx2")))) and then includes this header;
// every function here carries that attribute and sits in an anonymous namespace, so each file
// gets its own copy compiled for its own instruction set, and the linker can never pick a copy
// built for a wide set for code that runs on a narrower one.
//
// A file then supplies a vector type V:
//   using reg = ...; static constexpr std::size_t kBytes;
//   static reg load(const std::byte*); static void store(std::byte*, reg);  (unaligned)
//   static void stream(std::byte*, reg); static void fence();  (aligned non-temporal store)
//   template <class T> static reg splat(T);
// binary operations as templates Op<V, T, ShiftOverflow> with static reg apply(reg a, reg b)
// and static constexpr bool kUsesMode (false: instantiated for ShiftOverflow::zero only), and
// unary operations as types with In, Out, kElems and static void block(const std::byte* in,
// std::byte* out) computing kElems elements. A unary operation may also offer
// `template <class S> static void block(in, out)` writing through S::store256/S::store128; with
// S = V::Streaming (non-temporal stores, `out` aligned to V::kBytes) large outputs then bypass
// the caches as in binary kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu_backend.hpp"
#include "kernels.hpp"

#ifndef DMLBITS_TARGET
#error "define DMLBITS_TARGET before including kernel_loops.hpp"
#endif

namespace dmlbits::cpu {
namespace {

template <class T>
DMLBITS_TARGET inline T load_scalar(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The operand of lane group `offset`: loaded, or the broadcast constant.
template <class V, bool kConstant>
DMLBITS_TARGET inline typename V::reg operand(const std::byte* p, std::size_t offset, typename V::reg constant) {
  if constexpr (kConstant) {
    return constant;
  } else {
    return V::load(p + offset);
  }
}

// Bytes [i, i + rem) with rem < one vector, through zero-filled buffers, so that partial vectors
// run the same instructions as whole ones.
template <class V, class T, class Op, Operands K>
DMLBITS_TARGET inline void binary_partial(const std::byte* a, const std::byte* b, std::byte* out, std::size_t i,
                                          std::size_t rem, typename V::reg ca, typename V::reg cb) {
  constexpr std::size_t kStep = V::kBytes;
  constexpr bool kAConst = K == Operands::a_scalar;
  constexpr bool kBConst = K == Operands::b_scalar;
  alignas(64) std::byte ta[kStep] = {};
  alignas(64) std::byte tb[kStep] = {};
  alignas(64) std::byte to[kStep];
  if constexpr (!kAConst) std::memcpy(ta, a + i, rem);
  if constexpr (!kBConst) std::memcpy(tb, b + i, rem);
  V::store(to, Op::apply(operand<V, kAConst>(ta, 0, ca), operand<V, kBConst>(tb, 0, cb)));
  std::memcpy(out + i, to, rem);
}

// The large (streaming) paths also prefetch their inputs this far ahead: a popcount block is
// dozens of instructions, so the out-of-order window alone keeps too few cache-line reads in
// flight to read memory at full speed. Long blocks (popcounts, the 8- and 16-bit AVX2 shifts)
// gain; on the AVX2 host a one-instruction and/xor lost, so there a binary Op opts in with
// `static constexpr bool kPrefetch = true`. Unary blocks always prefetch; see also
// unary_body_pages. Figures: testdata/benchmarks.md, "Input prefetch distance".
constexpr std::size_t kPrefetchBytes = 2048;

// How far ahead the streaming binary path prefetches its inputs: Op::kPrefetchAhead where the
// operation states it, else V::kBinaryPrefetchBytes where the vector type sets one for every
// operation (AVX-512: on the AVX-512 host one thread read too slowly for the binary kernels
// without it, 0.91x memcpy, and 0.95-1.02x with it), else kPrefetchBytes for the operations
// that opt in with kPrefetch, else 0 (no prefetch).
template <class V, class Op>
constexpr std::size_t binary_prefetch_bytes() {
  if constexpr (requires { Op::kPrefetchAhead; }) return Op::kPrefetchAhead;
  else if constexpr (requires { V::kBinaryPrefetchBytes; }) return V::kBinaryPrefetchBytes;
  else if constexpr (requires { Op::kPrefetch; }) return Op::kPrefetch ? kPrefetchBytes : 0;
  else return 0;
}

// Whole vectors from byte i while they fit; returns where it stopped. kStream: non-temporal
// stores, `out + i` aligned to the vector size, and the inputs prefetched if Op asks for it.
template <class V, class T, class Op, Operands K, bool kStream>
DMLBITS_TARGET inline std::size_t binary_body(const std::byte* a, const std::byte* b, std::byte* out, std::size_t i,
                                              std::size_t bytes, typename V::reg ca, typename V::reg cb) {
  constexpr std::size_t kStep = V::kBytes;
  constexpr bool kAConst = K == Operands::a_scalar;
  constexpr bool kBConst = K == Operands::b_scalar;
  for (; i + 4 * kStep <= bytes; i += 4 * kStep) {
    if constexpr (constexpr std::size_t kAhead = binary_prefetch_bytes<V, Op>(); kStream && kAhead != 0) {
      // Reading past the end is harmless: prefetches never fault.
      for (std::size_t line = 0; line < 4 * kStep; line += 64) {
        if constexpr (!kAConst) __builtin_prefetch(a + i + kAhead + line, 0, 3);
        if constexpr (!kBConst) __builtin_prefetch(b + i + kAhead + line, 0, 3);
      }
    }
#pragma GCC unroll 4
    for (std::size_t j = 0; j < 4; ++j) {
      const std::size_t o = i + j * kStep;
      const auto r = Op::apply(operand<V, kAConst>(a, o, ca), operand<V, kBConst>(b, o, cb));
      if constexpr (kStream) V::stream(out + o, r);
      else V::store(out + o, r);
    }
  }
  for (; i + kStep <= bytes; i += kStep) {
    const auto r = Op::apply(operand<V, kAConst>(a, i, ca), operand<V, kBConst>(b, i, cb));
    if constexpr (kStream) V::stream(out + i, r);
    else V::store(out + i, r);
  }
  return i;
}

template <class V, class T, class Op, Operands K>
DMLBITS_TARGET void binary_loop(std::size_t n, const std::byte* a, const std::byte* b, std::byte* out,
                                std::size_t stream_min_bytes) {
  using reg = typename V::reg;
  constexpr std::size_t kStep = V::kBytes;
  if (n == 0) return;  // not even the broadcast element is read
  reg ca{};
  reg cb{};
  if constexpr (K == Operands::a_scalar) ca = V::splat(load_scalar<T>(a));
  if constexpr (K == Operands::b_scalar) cb = V::splat(load_scalar<T>(b));
  const std::size_t bytes = n * sizeof(T);
  std::size_t i = 0;
  if (bytes >= stream_min_bytes) {
    // Large outputs bypass the caches (as memcpy does), saving the read of each output line
    // before it is overwritten. The stores must be aligned: a partial head first.
    const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(out) % kStep;
    const std::size_t head = misalignment == 0 ? 0 : kStep - misalignment;
    if (head % sizeof(T) == 0 && head + kStep <= bytes) {
      if (head != 0) binary_partial<V, T, Op, K>(a, b, out, 0, head, ca, cb);
      i = binary_body<V, T, Op, K, true>(a, b, out, head, bytes, ca, cb);
      V::fence();
    }
  }
  i = binary_body<V, T, Op, K, false>(a, b, out, i, bytes, ca, cb);
  if (i < bytes) binary_partial<V, T, Op, K>(a, b, out, i, bytes - i, ca, cb);
}

template <class V, class T, template <class, class, ShiftOverflow> class Op, Operands K>
DMLBITS_TARGET void binary_kernel(std::size_t n, const void* a, const void* b, void* out, const KernelParams& params) {
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pb = static_cast<const std::byte*>(b);
  auto* po = static_cast<std::byte*>(out);
  if constexpr (Op<V, T, ShiftOverflow::zero>::kUsesMode) {
    switch (params.shift_overflow) {
      case ShiftOverflow::zero: break;
      case ShiftOverflow::wrap:
        binary_loop<V, T, Op<V, T, ShiftOverflow::wrap>, K>(n, pa, pb, po, params.stream_min_bytes);
        return;
      case ShiftOverflow::directml:
        binary_loop<V, T, Op<V, T, ShiftOverflow::directml>, K>(n, pa, pb, po, params.stream_min_bytes);
        return;
    }
  }
  binary_loop<V, T, Op<V, T, ShiftOverflow::zero>, K>(n, pa, pb, po, params.stream_min_bytes);
}

// Elements [0, rem) with rem <= Op::kElems, through buffers, so that partial blocks run the
// same instructions as whole ones.
template <class V, class Op>
DMLBITS_TARGET inline void unary_partial(const std::byte* in, std::byte* out, std::size_t rem) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  alignas(64) std::byte ta[Op::kElems * sizeof(In)] = {};
  alignas(64) std::byte to[Op::kElems * sizeof(Out)];
  std::memcpy(ta, in, rem * sizeof(In));
  Op::block(ta, to);
  std::memcpy(out, to, rem * sizeof(Out));
}

// Whole blocks from element i while they fit; returns where it stopped. S: the store policy
// (ordinary, or non-temporal with `out + i` aligned to the vector size).
template <class V, class Op, class S>
DMLBITS_TARGET inline std::size_t unary_body(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  constexpr std::size_t kElems = Op::kElems;
  constexpr std::size_t kBlockIn = kElems * sizeof(In);
  for (; i + 4 * kElems <= n; i += 4 * kElems) {
    if constexpr (!std::is_void_v<S>) {
      // Reading past the end is harmless: prefetches never fault.
      for (std::size_t line = 0; line < 4 * kBlockIn; line += 64)
        __builtin_prefetch(pa + i * sizeof(In) + kPrefetchBytes + line, 0, 3);
    }
#pragma GCC unroll 4
    for (std::size_t j = 0; j < 4; ++j) {
      const std::size_t e = i + j * kElems;
      if constexpr (std::is_void_v<S>) Op::block(pa + e * sizeof(In), po + e * sizeof(Out));
      else Op::template block<S>(pa + e * sizeof(In), po + e * sizeof(Out));
    }
  }
  for (; i + kElems <= n; i += kElems) {
    if constexpr (std::is_void_v<S>) Op::block(pa + i * sizeof(In), po + i * sizeof(Out));
    else Op::template block<S>(pa + i * sizeof(In), po + i * sizeof(Out));
  }
  return i;
}

// One step of the streaming paths below: the four blocks from element e, their input prefetched
// kAhead bytes further on (past the end is harmless: prefetches never fault).
template <class Op, class S, std::size_t kAhead>
DMLBITS_TARGET inline void unary_step(const std::byte* pa, std::byte* po, std::size_t e) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  constexpr std::size_t kStep = 4 * Op::kElems;
  for (std::size_t line = 0; line < kStep * sizeof(In); line += 64)
    __builtin_prefetch(pa + e * sizeof(In) + kAhead + line, 0, 3);
#pragma GCC unroll 4
  for (std::size_t k = 0; k < kStep; k += Op::kElems)
    Op::template block<S>(pa + (e + k) * sizeof(In), po + (e + k) * sizeof(Out));
}

// The streaming path's whole blocks from element i, reading kLanes neighbouring 4 KiB spans of
// the input side by side (as glibc's memcpy does with pages for large copies; the spans need
// not be page-aligned, and in-place `not` reads and writes each block in one place, as
// unary_body does): one thread reads memory faster from several sequential streams than from
// one. The narrowing popcounts gain most from four lanes. On the AVX2 host four collapsed where
// input and output elements have the same size, likely because every load then shares its
// address's low 12 bits with a recent store (4 KiB aliasing), so those ops use two there; the
// AVX-512 kernels on the AVX-512 host read fastest from eight (V::kSameWidthPageLanes: `not`
// 0.94 -> 1.03x memcpy). Figures: testdata/benchmarks.md, "Page lanes of the streaming unary
// path" and "Issue #17: the AVX-512 host".
template <class V, class Op>
constexpr std::size_t page_lanes() {
  if constexpr (sizeof(typename Op::In) != sizeof(typename Op::Out)) return 4;
  else if constexpr (requires { V::kSameWidthPageLanes; }) return V::kSameWidthPageLanes;
  else return 2;
}

template <class V, class Op, class S>
DMLBITS_TARGET inline std::size_t unary_body_pages(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i) {
  constexpr std::size_t kLanes = page_lanes<V, Op>();
  constexpr std::size_t kLane = 4096 / sizeof(typename Op::In);  // elements per input page
  constexpr std::size_t kStep = 4 * Op::kElems;
  static_assert(kLane % kStep == 0);
  for (; i + kLanes * kLane <= n; i += kLanes * kLane)
    for (std::size_t j = 0; j < kLane; j += kStep)
      for (std::size_t lane = 0; lane < kLanes; ++lane)
        unary_step<Op, S, kLanes * 4096>(pa, po, i + lane * kLane + j);  // prefetch: the next group
  return unary_body<V, Op, S>(n, pa, po, i);
}

// The streaming path of a narrowing popcount where the vector type asks for it
// (V::kNarrowingStreams): the input split into that many contiguous parts, read side by side,
// each prefetched V::kNarrowingPrefetchBytes ahead. These ops read 2-8 bytes per byte written, so
// one thread's reads bound them, and one thread reads faster from several distant streams than
// from neighbouring pages: on the AVX-512 host four parts took u16 -> u8 and u64 -> u32 from
// 0.91-0.98x to 1.01-1.04x memcpy, u32 -> u8 from 0.83-0.85x to 0.92-0.94x, u64 -> u8 from 0.80x
// to 0.87-0.91x (testdata/benchmarks.md, "Issue #17: the AVX-512 host", point 2). Part h writes
// output that part h - 1 reads as input if the two overlap, so this path is never in place:
// popcount never is (validate refuses it; DirectML's BIT_COUNT may not alias its input).
template <class V, class Op>
constexpr bool narrowing_streams() {
  if constexpr (requires { V::kNarrowingStreams; }) return sizeof(typename Op::In) > sizeof(typename Op::Out);
  else return false;
}

template <class V, class Op, class S>
DMLBITS_TARGET inline std::size_t unary_body_streams(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i) {
  constexpr std::size_t kStreams = V::kNarrowingStreams;
  constexpr std::size_t kStep = 4 * Op::kElems;
  static_assert(kStep * sizeof(typename Op::Out) % V::kBytes == 0, "each part's output must start aligned");
  const std::size_t part = (n - i) / kStreams / kStep * kStep;
  for (std::size_t j = 0; j < part; j += kStep)
    for (std::size_t h = 0; h < kStreams; ++h)
      unary_step<Op, S, V::kNarrowingPrefetchBytes>(pa, po, i + h * part + j);
  return unary_body<V, Op, S>(n, pa, po, i + kStreams * part);
}

// An operation whose blocks can write through a store policy (V::Streaming: non-temporal).
template <class V, class Op>
concept StreamableUnary = requires(const std::byte* in, std::byte* out) {
  Op::template block<typename V::Streaming>(in, out);
};

template <class V, class Op>
DMLBITS_TARGET void unary_kernel(std::size_t n, const void* a, const void*, void* out, const KernelParams& params) {
  using Out = typename Op::Out;
  constexpr std::size_t kElems = Op::kElems;
  const auto* pa = static_cast<const std::byte*>(a);
  auto* po = static_cast<std::byte*>(out);
  std::size_t i = 0;
  if constexpr (StreamableUnary<V, Op>) {
    if (n * sizeof(Out) >= params.stream_min_bytes) {
      // As binary_loop: large outputs bypass the caches. The head, up to the first aligned
      // output address, goes through the partial path.
      const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(po) % V::kBytes;
      const std::size_t head_bytes = misalignment == 0 ? 0 : V::kBytes - misalignment;
      if (head_bytes % sizeof(Out) == 0 && head_bytes / sizeof(Out) + kElems <= n) {
        const std::size_t head = head_bytes / sizeof(Out);
        for (std::size_t h = 0; h < head; h += kElems) {
          const std::size_t rem = head - h < kElems ? head - h : kElems;
          unary_partial<V, Op>(pa + h * sizeof(typename Op::In), po + h * sizeof(Out), rem);
        }
        if constexpr (narrowing_streams<V, Op>())
          i = unary_body_streams<V, Op, typename V::Streaming>(n, pa, po, head);
        else
          i = unary_body_pages<V, Op, typename V::Streaming>(n, pa, po, head);
        V::fence();
      }
    }
  } else {
    (void)params;
  }
  i = unary_body<V, Op, void>(n, pa, po, i);
  if (i < n) unary_partial<V, Op>(pa + i * sizeof(typename Op::In), po + i * sizeof(Out), n - i);
}

}  // namespace
}  // namespace dmlbits::cpu

// Table rows for one element type T, in a scope that defines V, kIsa and kTag.
#define DMLBITS_BINARY_ROW(OPKIND, OP, T, OPERANDS)                                                     \
  ::dmlbits::cpu::KernelRow {                                                                            \
    OpKind::OPKIND, sizeof(T), sizeof(T), Operands::OPERANDS, kIsa, CpuExtension::none, kTag,            \
        &binary_kernel<V, T, OP, Operands::OPERANDS>                                                     \
  }
#define DMLBITS_BINARY_ROWS(OPKIND, OP, T)                                                                 \
  DMLBITS_BINARY_ROW(OPKIND, OP, T, vectors), DMLBITS_BINARY_ROW(OPKIND, OP, T, b_scalar),                \
      DMLBITS_BINARY_ROW(OPKIND, OP, T, a_scalar)
#define DMLBITS_UNARY_ROW(OPKIND, EXT, ...)                                                                \
  ::dmlbits::cpu::KernelRow {                                                                            \
    OpKind::OPKIND, sizeof(typename __VA_ARGS__::In), sizeof(typename __VA_ARGS__::Out), Operands::vectors, \
        kIsa, CpuExtension::EXT, kTag, &unary_kernel<V, __VA_ARGS__>                                      \
  }
