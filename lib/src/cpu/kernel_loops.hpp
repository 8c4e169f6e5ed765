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
//   store kinds V::Stored and V::Streaming (ordinary; non-temporal to addresses aligned to the
//   store's size), each with static store256/store128 (and store512 where the set has it);
// binary operations as templates Op<V, T, ShiftOverflow> with static reg apply(reg a, reg b)
// and static constexpr bool kUsesMode (false: instantiated for ShiftOverflow::zero only), and
// unary operations as types with In, Out, kElems and
// `template <class S = V::Stored> static void block(const std::byte* in, std::byte* out)`
// computing kElems elements, writing through S; and a streaming policy (stream_policy.hpp),
// named `Policy` where the table rows are built, whose plan each row passes to its kernel (a
// unary row passes the policy itself: its plan may depend on the CPU's maker).
// The operations whose bodies are the same at every vector width (ShlOp, ShrOp, NotOp, below)
// are written here once, over three more members of V: `template <bool kLeft, class T,
// ShiftOverflow M> static reg shift(reg a, reg b)` (the set's shift of T lanes in mode M),
// `static reg bit_not(reg)`, and in each store kind `static void store_vector(std::byte*, reg)`
// (one whole vector). A set that has every operator builds its rows with DMLBITS_SET_ROWS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu_backend.hpp"
#include "kernels.hpp"
#include "stream_policy.hpp"

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

// Whole vectors from byte i while they fit; returns where it stopped. kStream: non-temporal
// stores, `out + i` aligned to the vector size, and the inputs prefetched kAhead bytes ahead
// (0: not at all).
template <class V, class T, class Op, Operands K, bool kStream, std::size_t kAhead>
DMLBITS_TARGET inline std::size_t binary_body(const std::byte* a, const std::byte* b, std::byte* out, std::size_t i,
                                              std::size_t bytes, typename V::reg ca, typename V::reg cb) {
  constexpr std::size_t kStep = V::kBytes;
  constexpr bool kAConst = K == Operands::a_scalar;
  constexpr bool kBConst = K == Operands::b_scalar;
  for (; i + kUnroll * kStep <= bytes; i += kUnroll * kStep) {
    if constexpr (kStream && kAhead != 0) {
      // Reading past the end is harmless: prefetches never fault.
      for (std::size_t line = 0; line < kUnroll * kStep; line += 64) {
        if constexpr (!kAConst) __builtin_prefetch(a + i + kAhead + line, 0, 3);
        if constexpr (!kBConst) __builtin_prefetch(b + i + kAhead + line, 0, 3);
      }
    }
    if constexpr (kStream) {
#pragma GCC unroll kUnroll
      for (std::size_t j = 0; j < kUnroll; ++j) {
        const std::size_t o = i + j * kStep;
        V::stream(out + o, Op::apply(operand<V, kAConst>(a, o, ca), operand<V, kBConst>(b, o, cb)));
      }
    } else {
      // Cached stores: the block's loads first. The compiler may not move a load above a store
      // to memory it cannot tell apart, and a load that follows a store 4 KiB-aliased to it
      // (out a vector past an input, modulo 4096, as NumPy's allocator often places a result)
      // waits for that store; with the loads first, one vector of the next block at most does
      // (1 MiB bitwise_and so placed: 45 -> 35 us). (Streamed stores gained nothing from it.)
      typename V::reg ra[kUnroll], rb[kUnroll];  // (a std::array would drop the vector type's alignment)
#pragma GCC unroll kUnroll
      for (std::size_t j = 0; j < kUnroll; ++j) {
        ra[j] = operand<V, kAConst>(a, i + j * kStep, ca);
        rb[j] = operand<V, kBConst>(b, i + j * kStep, cb);
      }
#pragma GCC unroll kUnroll
      for (std::size_t j = 0; j < kUnroll; ++j) V::store(out + i + j * kStep, Op::apply(ra[j], rb[j]));
    }
  }
  for (; i + kStep <= bytes; i += kStep) {
    const auto r = Op::apply(operand<V, kAConst>(a, i, ca), operand<V, kBConst>(b, i, cb));
    if constexpr (kStream) V::stream(out + i, r);
    else V::store(out + i, r);
  }
  return i;
}

// From this many bytes of output the cached path aligns its stores (binary_loop).
inline constexpr std::size_t kAlignedStoreMinBytes = 4096;

template <class V, class T, class Op, Operands K, BinaryStream kPlan>
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
      i = binary_body<V, T, Op, K, true, kPlan.prefetch_bytes>(a, b, out, head, bytes, ca, cb);
      V::fence();
    }
  } else if (bytes >= kAlignedStoreMinBytes) {
    // Cached outputs are stored aligned too: a store that straddles two lines costs more than a
    // partial head (1 MiB 16 bytes off a line: 5% slower), and operands of one allocator, off
    // the line alike, then load aligned as well.
    const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(out) % kStep;
    const std::size_t head = misalignment == 0 ? 0 : kStep - misalignment;
    if (head != 0 && head % sizeof(T) == 0 && head + kStep <= bytes) {
      binary_partial<V, T, Op, K>(a, b, out, 0, head, ca, cb);
      i = head;
    }
  }
  i = binary_body<V, T, Op, K, false, 0>(a, b, out, i, bytes, ca, cb);
  if (i < bytes) binary_partial<V, T, Op, K>(a, b, out, i, bytes - i, ca, cb);
}

template <class V, class T, template <class, class, ShiftOverflow> class Op, Operands K, BinaryStream kPlan>
DMLBITS_TARGET void binary_kernel(std::size_t n, const void* a, const void* b, void* out, const KernelParams& params) {
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pb = static_cast<const std::byte*>(b);
  auto* po = static_cast<std::byte*>(out);
  if constexpr (Op<V, T, ShiftOverflow::zero>::kUsesMode) {
    switch (params.shift_overflow) {
      case ShiftOverflow::zero:
        break;
      case ShiftOverflow::wrap:
        binary_loop<V, T, Op<V, T, ShiftOverflow::wrap>, K, kPlan>(n, pa, pb, po, params.stream_min_bytes);
        return;
      case ShiftOverflow::directml:
        binary_loop<V, T, Op<V, T, ShiftOverflow::directml>, K, kPlan>(n, pa, pb, po, params.stream_min_bytes);
        return;
    }
  }
  binary_loop<V, T, Op<V, T, ShiftOverflow::zero>, K, kPlan>(n, pa, pb, po, params.stream_min_bytes);
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

// Whole blocks from element i while they fit; returns where it stopped. S: the store kind
// (void: ordinary stores; V::Streaming: non-temporal, `out + i` aligned to the vector size,
// each step's input prefetched kAhead bytes ahead).
template <class V, class Op, class S, std::size_t kAhead>
DMLBITS_TARGET inline std::size_t unary_body(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  constexpr std::size_t kElems = Op::kElems;
  constexpr std::size_t kBlockIn = kElems * sizeof(In);
  for (; i + kUnroll * kElems <= n; i += kUnroll * kElems) {
    if constexpr (!std::is_void_v<S>) {
      // Reading past the end is harmless: prefetches never fault.
      for (std::size_t line = 0; line < kUnroll * kBlockIn; line += 64)
        __builtin_prefetch(pa + i * sizeof(In) + kAhead + line, 0, 3);
    }
    if constexpr (std::is_void_v<S> && requires(typename V::reg r) { Op::apply(r); }) {
      // A vector in, a vector out (not): the block's loads before its stores, as binary_body's
      // cached path does, and for the same reason (4 KiB aliasing).
      typename V::reg r[kUnroll];
#pragma GCC unroll kUnroll
      for (std::size_t j = 0; j < kUnroll; ++j) r[j] = V::load(pa + (i + j * kElems) * sizeof(In));
#pragma GCC unroll kUnroll
      for (std::size_t j = 0; j < kUnroll; ++j) V::store(po + (i + j * kElems) * sizeof(Out), Op::apply(r[j]));
    } else {
#pragma GCC unroll kUnroll
      for (std::size_t j = 0; j < kUnroll; ++j) {
        const std::size_t e = i + j * kElems;
        if constexpr (std::is_void_v<S>) Op::block(pa + e * sizeof(In), po + e * sizeof(Out));
        else Op::template block<S>(pa + e * sizeof(In), po + e * sizeof(Out));
      }
    }
  }
  for (; i + kElems <= n; i += kElems) {
    if constexpr (std::is_void_v<S>) Op::block(pa + i * sizeof(In), po + i * sizeof(Out));
    else Op::template block<S>(pa + i * sizeof(In), po + i * sizeof(Out));
  }
  return i;
}

// One step of the streaming paths below: the kUnroll blocks from element e, their input
// prefetched kAhead bytes further on (past the end is harmless: prefetches never fault).
template <class Op, class S, std::size_t kAhead>
DMLBITS_TARGET inline void unary_step(const std::byte* pa, std::byte* po, std::size_t e) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  constexpr std::size_t kStep = kUnroll * Op::kElems;
  for (std::size_t line = 0; line < kStep * sizeof(In); line += 64)
    __builtin_prefetch(pa + e * sizeof(In) + kAhead + line, 0, 3);
#pragma GCC unroll kUnroll
  for (std::size_t k = 0; k < kStep; k += Op::kElems)
    Op::template block<S>(pa + (e + k) * sizeof(In), po + (e + k) * sizeof(Out));
}

// UnaryRead::pages (stream_policy.hpp): the whole blocks from element i, reading kPlan.lanes
// neighbouring 4 KiB spans of the input side by side (as glibc's memcpy does with pages for
// large copies; the spans need not be page-aligned, and in-place `not` reads and writes each
// block in one place, as unary_body does): one thread reads memory faster from several
// sequential streams than from one.
template <class V, class Op, class S, UnaryStream kPlan>
DMLBITS_TARGET inline std::size_t unary_body_pages(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i) {
  constexpr std::size_t kLanes = kPlan.lanes;
  constexpr std::size_t kLane = 4096 / sizeof(typename Op::In);  // elements per input page
  constexpr std::size_t kStep = kUnroll * Op::kElems;
  static_assert(kLane % kStep == 0);
  for (; i + kLanes * kLane <= n; i += kLanes * kLane)
    for (std::size_t j = 0; j < kLane; j += kStep)
      for (std::size_t lane = 0; lane < kLanes; ++lane)
        unary_step<Op, S, kPlan.prefetch_bytes>(pa, po, i + lane * kLane + j);
  return unary_body<V, Op, S, kPlan.rest_prefetch_bytes>(n, pa, po, i);
}

// UnaryRead::parts: the input split into kPlan.lanes contiguous parts, read side by side, each
// prefetched kPlan.prefetch_bytes ahead: for operations that read several bytes per byte
// written, which one thread's reads bound, and one thread reads faster from several distant
// streams than from neighbouring pages. Part h writes output that part h - 1 reads as input if
// the two overlap, so this path is never in place: only narrowing operations take it, and the
// one there is, popcount, never is (validate refuses it; DirectML's BIT_COUNT may not alias its
// input).
template <class V, class Op, class S, UnaryStream kPlan>
DMLBITS_TARGET inline std::size_t unary_body_parts(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i) {
  static_assert(sizeof(typename Op::In) > sizeof(typename Op::Out), "parts are for narrowing operations only");
  constexpr std::size_t kParts = kPlan.lanes;
  constexpr std::size_t kStep = kUnroll * Op::kElems;
  static_assert(kStep * sizeof(typename Op::Out) % V::kBytes == 0, "each part's output must start aligned");
  const std::size_t part = (n - i) / kParts / kStep * kStep;
  for (std::size_t j = 0; j < part; j += kStep)
    for (std::size_t h = 0; h < kParts; ++h) unary_step<Op, S, kPlan.prefetch_bytes>(pa, po, i + h * part + j);
  return unary_body<V, Op, S, kPlan.rest_prefetch_bytes>(n, pa, po, i + kParts * part);
}

// The streaming body under one plan, from element i (output aligned there).
template <class V, class Op, UnaryStream kPlan>
DMLBITS_TARGET inline std::size_t unary_body_plan(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i) {
  if constexpr (kPlan.read == UnaryRead::parts)
    return unary_body_parts<V, Op, typename V::Streaming, kPlan>(n, pa, po, i);
  else return unary_body_pages<V, Op, typename V::Streaming, kPlan>(n, pa, po, i);
}

// The plan Policy gives this operation on the CPU's maker (stream_policy.hpp). Makers with the
// same plan share one instantiation; cpu_vendor() is asked here, once a run is large enough to
// stream, never on a small run's path.
template <class V, class Op, class Policy>
DMLBITS_TARGET inline std::size_t unary_body_streaming(std::size_t n, const std::byte* pa, std::byte* po, std::size_t i,
                                                       const KernelParams& params) {
  constexpr unsigned kIn = sizeof(typename Op::In);
  constexpr unsigned kOut = sizeof(typename Op::Out);
  switch (params.vendor ? *params.vendor : cpu_vendor()) {
    case CpuVendor::intel:
      return unary_body_plan<V, Op, Policy::unary(kIn, kOut, CpuVendor::intel)>(n, pa, po, i);
    case CpuVendor::amd:
      return unary_body_plan<V, Op, Policy::unary(kIn, kOut, CpuVendor::amd)>(n, pa, po, i);
    case CpuVendor::other:
      break;
  }
  return unary_body_plan<V, Op, Policy::unary(kIn, kOut, CpuVendor::other)>(n, pa, po, i);
}

template <class V, class Op, class Policy>
DMLBITS_TARGET void unary_kernel(std::size_t n, const void* a, const void*, void* out, const KernelParams& params) {
  using Out = typename Op::Out;
  constexpr std::size_t kElems = Op::kElems;
  const auto* pa = static_cast<const std::byte*>(a);
  auto* po = static_cast<std::byte*>(out);
  std::size_t i = 0;
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
      i = unary_body_streaming<V, Op, Policy>(n, pa, po, head, params);
      V::fence();
    }
  }
  i = unary_body<V, Op, void, 0>(n, pa, po, i);
  if (i < n) unary_partial<V, Op>(pa + i * sizeof(typename Op::In), po + i * sizeof(Out), n - i);
}

// ---- Operations written once for every set ----
// They differ between sets only in V's members, which inline to the same instructions each
// file wrote out before.

template <class V, class T, ShiftOverflow M>
struct ShlOp {
  static constexpr bool kUsesMode = true;
  DMLBITS_TARGET static typename V::reg apply(typename V::reg a, typename V::reg b) {
    return V::template shift<true, T, M>(a, b);
  }
};
template <class V, class T, ShiftOverflow M>
struct ShrOp {
  static constexpr bool kUsesMode = true;
  DMLBITS_TARGET static typename V::reg apply(typename V::reg a, typename V::reg b) {
    return V::template shift<false, T, M>(a, b);
  }
};

template <class V, class T>
struct NotOp {
  using In = T;
  using Out = T;
  static constexpr std::size_t kElems = V::kBytes / sizeof(T);
  DMLBITS_TARGET static typename V::reg apply(typename V::reg a) { return V::bit_not(a); }
  template <class S = typename V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store_vector(out, apply(V::load(in)));
  }
};

}  // namespace
}  // namespace dmlbits::cpu

// Table rows for one element type T, in a scope that defines V, Policy (the set's streaming
// policy), kIsa and kTag. Each row's kernel takes the plan Policy gives its operation and widths
// (a unary one: the plan for the CPU's maker, chosen when it streams).
#define DMLBITS_BINARY_ROW(OPKIND, OP, T, OPERANDS)                                             \
  ::dmlbits::cpu::KernelRow {                                                                   \
    OpKind::OPKIND, sizeof(T), sizeof(T), Operands::OPERANDS, kIsa, CpuExtension::none, kTag,   \
        &binary_kernel<V, T, OP, Operands::OPERANDS, Policy::binary(OpKind::OPKIND, sizeof(T))> \
  }
#define DMLBITS_BINARY_ROWS(OPKIND, OP, T)                                                 \
  DMLBITS_BINARY_ROW(OPKIND, OP, T, vectors), DMLBITS_BINARY_ROW(OPKIND, OP, T, b_scalar), \
      DMLBITS_BINARY_ROW(OPKIND, OP, T, a_scalar)
#define DMLBITS_UNARY_ROW(OPKIND, EXT, ...)                                                                       \
  ::dmlbits::cpu::KernelRow {                                                                                     \
    OpKind::OPKIND, sizeof(typename __VA_ARGS__::In), sizeof(typename __VA_ARGS__::Out), Operands::vectors, kIsa, \
        CpuExtension::EXT, kTag, &unary_kernel<V, __VA_ARGS__, Policy>                                            \
  }

// Every operator at every width and layout, for a set that has them all (kernels_avx2.cpp,
// kernels_avx512.cpp), in a scope that also defines the set's AndOp, OrOp and XorOp (one
// instruction each) and PopcntOp<T, Out> (the counts and their packing differ by set).
#define DMLBITS_WIDTH_ROWS(T)                                                                                         \
  DMLBITS_BINARY_ROWS(bit_and, AndOp, T), DMLBITS_BINARY_ROWS(bit_or, OrOp, T),                                       \
      DMLBITS_BINARY_ROWS(bit_xor, XorOp, T), DMLBITS_BINARY_ROWS(shl, ShlOp, T), DMLBITS_BINARY_ROWS(shr, ShrOp, T), \
      DMLBITS_UNARY_ROW(bit_not, none, NotOp<V, T>), DMLBITS_UNARY_ROW(popcount, none, PopcntOp<T, std::uint8_t>),    \
      DMLBITS_UNARY_ROW(popcount, none, PopcntOp<T, std::uint32_t>)
#define DMLBITS_SET_ROWS                                                                                  \
  DMLBITS_WIDTH_ROWS(std::uint8_t), DMLBITS_WIDTH_ROWS(std::uint16_t), DMLBITS_WIDTH_ROWS(std::uint32_t), \
      DMLBITS_WIDTH_ROWS(std::uint64_t)
