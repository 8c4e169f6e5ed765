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
// std::byte* out) computing kElems elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "dmlbits/cpu_backend.hpp"
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

// Whole vectors from byte i while they fit; returns where it stopped. kStream: non-temporal
// stores, `out + i` aligned to the vector size.
template <class V, class T, class Op, Operands K, bool kStream>
DMLBITS_TARGET inline std::size_t binary_body(const std::byte* a, const std::byte* b, std::byte* out, std::size_t i,
                                              std::size_t bytes, typename V::reg ca, typename V::reg cb) {
  constexpr std::size_t kStep = V::kBytes;
  constexpr bool kAConst = K == Operands::a_scalar;
  constexpr bool kBConst = K == Operands::b_scalar;
  for (; i + 4 * kStep <= bytes; i += 4 * kStep) {
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
    if (params.shift_overflow == ShiftOverflow::wrap) {
      binary_loop<V, T, Op<V, T, ShiftOverflow::wrap>, K>(n, pa, pb, po, params.stream_min_bytes);
      return;
    }
  }
  binary_loop<V, T, Op<V, T, ShiftOverflow::zero>, K>(n, pa, pb, po, params.stream_min_bytes);
}

template <class V, class Op>
DMLBITS_TARGET void unary_kernel(std::size_t n, const void* a, const void*, void* out, const KernelParams&) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  constexpr std::size_t kElems = Op::kElems;
  const auto* pa = static_cast<const std::byte*>(a);
  auto* po = static_cast<std::byte*>(out);
  std::size_t i = 0;
  for (; i + 4 * kElems <= n; i += 4 * kElems) {
#pragma GCC unroll 4
    for (std::size_t j = 0; j < 4; ++j) Op::block(pa + (i + j * kElems) * sizeof(In), po + (i + j * kElems) * sizeof(Out));
  }
  for (; i + kElems <= n; i += kElems) Op::block(pa + i * sizeof(In), po + i * sizeof(Out));
  if (i < n) {
    const std::size_t rem = n - i;
    alignas(64) std::byte ta[kElems * sizeof(In)] = {};
    alignas(64) std::byte to[kElems * sizeof(Out)];
    std::memcpy(ta, pa + i * sizeof(In), rem * sizeof(In));
    Op::block(ta, to);
    std::memcpy(po + i * sizeof(Out), to, rem * sizeof(Out));
  }
}

}  // namespace
}  // namespace dmlbits::cpu

// Table rows for one element type T, in a scope that defines V, kIsa and kTag.
#define DMLBITS_BINARY_ROWS(KOP, OP, T)                                                                    \
  ::dmlbits::cpu::KernelRow{KernelOp::KOP, sizeof(T), Operands::vectors, kIsa, CpuExtension::none, kTag,   \
                            &binary_kernel<V, T, OP, Operands::vectors>},                                   \
      ::dmlbits::cpu::KernelRow{KernelOp::KOP, sizeof(T), Operands::b_scalar, kIsa, CpuExtension::none, kTag, \
                                &binary_kernel<V, T, OP, Operands::b_scalar>},                              \
      ::dmlbits::cpu::KernelRow {                                                                          \
    KernelOp::KOP, sizeof(T), Operands::a_scalar, kIsa, CpuExtension::none, kTag,                          \
        &binary_kernel<V, T, OP, Operands::a_scalar>                                                       \
  }
#define DMLBITS_UNARY_ROW(KOP, EXT, ...)                                                                   \
  ::dmlbits::cpu::KernelRow {                                                                              \
    KernelOp::KOP, sizeof(typename __VA_ARGS__::In), Operands::vectors, kIsa, CpuExtension::EXT, kTag,     \
        &unary_kernel<V, __VA_ARGS__>                                                                      \
  }
