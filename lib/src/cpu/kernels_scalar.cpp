// Portable kernels: one element at a time, loads and stores through memcpy (so any alignment
// is fine), written so that the compiler can vectorise them for the baseline instruction set
// (SSE2 on x86-64). They cover every (operation, width, operand layout) and are what the other
// sets fall back to.
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels.hpp"

namespace dmlbits::cpu {
namespace {

template <class T>
inline T load(const std::byte* p, std::size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
inline void store(std::byte* p, std::size_t i, T v) {
  std::memcpy(p + i * sizeof(T), &v, sizeof(T));
}

template <class T, ShiftOverflow>
struct AndOp {
  static constexpr bool kUsesMode = false;
  static T apply(T a, T b) { return static_cast<T>(a & b); }
};
template <class T, ShiftOverflow>
struct OrOp {
  static constexpr bool kUsesMode = false;
  static T apply(T a, T b) { return static_cast<T>(a | b); }
};
template <class T, ShiftOverflow>
struct XorOp {
  static constexpr bool kUsesMode = false;
  static T apply(T a, T b) { return static_cast<T>(a ^ b); }
};

// The count is B's whole value: zero mode gives 0 for counts >= the width, wrap takes the
// count modulo the width (a power of two, so a mask). directml (the reference in ops.cpp says
// why): up to 16 bits, zero mode's rule on the count's low 5 bits (a 32-bit lane shifted by
// count & 31); 32 bits, wrap; 64 bits, with c the count's low 32 bits, c if c < 32, else
// 32 | (c & 31). Each mode does only what it needs: a test that cannot be true costs time.
template <class T, ShiftOverflow M>
inline T shift_count(T b) {
  constexpr T kMask = sizeof(T) * 8 - 1;
  if constexpr (M == ShiftOverflow::directml && sizeof(T) == 8) {
    const T c = b & 0xFFFFFFFFu;
    return c < 32 ? c : (32 | (c & 31));
  } else {
    return b & kMask;
  }
}
// Whether the result is 0 (the count empties the element) rather than the shift.
template <class T, ShiftOverflow M>
inline bool shifted_out(T b) {
  constexpr unsigned kWidth = sizeof(T) * 8;
  if constexpr (M == ShiftOverflow::zero) return b >= kWidth;
  else if constexpr (M == ShiftOverflow::directml && kWidth < 32) return (b & 31) >= kWidth;
  else return false;
}

template <class T, ShiftOverflow M>
struct ShlOp {
  static constexpr bool kUsesMode = true;
  static T apply(T a, T b) {
    const T shifted = static_cast<T>(a << shift_count<T, M>(b));
    return shifted_out<T, M>(b) ? T{0} : shifted;
  }
};
template <class T, ShiftOverflow M>
struct ShrOp {
  static constexpr bool kUsesMode = true;
  static T apply(T a, T b) {
    const T shifted = static_cast<T>(a >> shift_count<T, M>(b));
    return shifted_out<T, M>(b) ? T{0} : shifted;
  }
};

template <class T, class Op, Operands K>
void binary_loop(std::size_t n, const std::byte* a, const std::byte* b, std::byte* out) {
  if (n == 0) return;  // not even the broadcast element is read
  if constexpr (K == Operands::a_scalar) {
    const T ca = load<T>(a, 0);
    for (std::size_t i = 0; i < n; ++i) store<T>(out, i, Op::apply(ca, load<T>(b, i)));
  } else if constexpr (K == Operands::b_scalar) {
    const T cb = load<T>(b, 0);
    for (std::size_t i = 0; i < n; ++i) store<T>(out, i, Op::apply(load<T>(a, i), cb));
  } else {
    for (std::size_t i = 0; i < n; ++i) store<T>(out, i, Op::apply(load<T>(a, i), load<T>(b, i)));
  }
}

template <class T, template <class, ShiftOverflow> class Op, Operands K>
void binary_kernel(std::size_t n, const void* a, const void* b, void* out, const KernelParams& params) {
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pb = static_cast<const std::byte*>(b);
  auto* po = static_cast<std::byte*>(out);
  if constexpr (Op<T, ShiftOverflow::zero>::kUsesMode) {
    switch (params.shift_overflow) {
      case ShiftOverflow::zero:
        break;
      case ShiftOverflow::wrap:
        binary_loop<T, Op<T, ShiftOverflow::wrap>, K>(n, pa, pb, po);
        return;
      case ShiftOverflow::directml:
        binary_loop<T, Op<T, ShiftOverflow::directml>, K>(n, pa, pb, po);
        return;
    }
  }
  binary_loop<T, Op<T, ShiftOverflow::zero>, K>(n, pa, pb, po);
}

template <class T>
void not_kernel(std::size_t n, const void* a, const void*, void* out, const KernelParams&) {
  const auto* pa = static_cast<const std::byte*>(a);
  auto* po = static_cast<std::byte*>(out);
  for (std::size_t i = 0; i < n; ++i) store<T>(po, i, static_cast<T>(~load<T>(pa, i)));
}

// Without POPCNT, std::popcount becomes a call to libgcc's __popcountdi2 per element; the
// classic bit trick (pairs, nibbles, then a multiply summing the bytes into the top one) stays
// inline and vectorises.
template <class T>
inline unsigned popcount_swar(T x) {
  using U = std::conditional_t<(sizeof(T) <= 4), std::uint32_t, std::uint64_t>;
  constexpr U k55 = static_cast<U>(0x5555555555555555ull);
  constexpr U k33 = static_cast<U>(0x3333333333333333ull);
  constexpr U k0f = static_cast<U>(0x0F0F0F0F0F0F0F0Full);
  constexpr U k01 = static_cast<U>(0x0101010101010101ull);
  U v = x;
  v = v - ((v >> 1) & k55);
  v = (v & k33) + ((v >> 2) & k33);
  v = (v + (v >> 4)) & k0f;
  return static_cast<unsigned>((v * k01) >> (sizeof(U) * 8 - 8));
}

// The bit trick's first three steps leave each byte's count in that byte: bytes to bytes go
// eight at a time.
inline std::uint64_t byte_counts(std::uint64_t v) {
  v = v - ((v >> 1) & 0x5555555555555555ull);
  v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
  return (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
}

template <class T, class Out>
void popcount_kernel(std::size_t n, const void* a, const void*, void* out, const KernelParams&) {
  const auto* pa = static_cast<const std::byte*>(a);
  auto* po = static_cast<std::byte*>(out);
  std::size_t i = 0;
  if constexpr (sizeof(T) == 1 && sizeof(Out) == 1)
    for (; i + 8 <= n; i += 8) store<std::uint64_t>(po + i, 0, byte_counts(load<std::uint64_t>(pa + i, 0)));
  for (; i < n; ++i) store<Out>(po, i, static_cast<Out>(popcount_swar(load<T>(pa, i))));
}

// The same with the POPCNT instruction, for CPUs that have it (nearly all x86-64 since 2008).
template <class T, class Out>
__attribute__((target("popcnt"))) void popcnt_insn_kernel(std::size_t n, const void* a, const void*, void* out,
                                                          const KernelParams&) {
  const auto* pa = static_cast<const std::byte*>(a);
  auto* po = static_cast<std::byte*>(out);
  for (std::size_t i = 0; i < n; ++i) {
    const T x = load<T>(pa, i);
    unsigned c;
    if constexpr (sizeof(T) == 8) c = static_cast<unsigned>(__builtin_popcountll(x));
    else c = static_cast<unsigned>(__builtin_popcount(x));
    store<Out>(po, i, static_cast<Out>(c));
  }
}

#define DMLBITS_SCALAR_ROW(OPKIND, T, OUT, OPERANDS, EXT, TAG, FN) \
  KernelRow { OpKind::OPKIND, sizeof(T), sizeof(OUT), Operands::OPERANDS, Isa::scalar, CpuExtension::EXT, TAG, FN }
#define DMLBITS_SCALAR_BINARY(OPKIND, OP, T)                                                                   \
  DMLBITS_SCALAR_ROW(OPKIND, T, T, vectors, none, "scalar", (&binary_kernel<T, OP, Operands::vectors>)),       \
      DMLBITS_SCALAR_ROW(OPKIND, T, T, b_scalar, none, "scalar", (&binary_kernel<T, OP, Operands::b_scalar>)), \
      DMLBITS_SCALAR_ROW(OPKIND, T, T, a_scalar, none, "scalar", (&binary_kernel<T, OP, Operands::a_scalar>))

#define DMLBITS_SCALAR_WIDTH(T)                                                        \
  DMLBITS_SCALAR_BINARY(bit_and, AndOp, T), DMLBITS_SCALAR_BINARY(bit_or, OrOp, T),    \
      DMLBITS_SCALAR_BINARY(bit_xor, XorOp, T), DMLBITS_SCALAR_BINARY(shl, ShlOp, T),  \
      DMLBITS_SCALAR_BINARY(shr, ShrOp, T),                                            \
      DMLBITS_SCALAR_ROW(bit_not, T, T, vectors, none, "scalar", &not_kernel<T>),      \
      DMLBITS_SCALAR_ROW(popcount, T, std::uint8_t, vectors, popcnt, "scalar_popcnt",  \
                         (&popcnt_insn_kernel<T, std::uint8_t>)),                      \
      DMLBITS_SCALAR_ROW(popcount, T, std::uint32_t, vectors, popcnt, "scalar_popcnt", \
                         (&popcnt_insn_kernel<T, std::uint32_t>))
#define DMLBITS_SCALAR_SWAR_POPCOUNT(T)                                                                        \
  DMLBITS_SCALAR_ROW(popcount, T, std::uint8_t, vectors, none, "scalar", (&popcount_kernel<T, std::uint8_t>)), \
      DMLBITS_SCALAR_ROW(popcount, T, std::uint32_t, vectors, none, "scalar", (&popcount_kernel<T, std::uint32_t>))

// Within one (operation, widths), later rows are preferred when the CPU runs them: the
// vectorised bit trick for 8- to 32-bit elements, where it beats one POPCNT per element, and
// POPCNT for 64-bit ones (testdata/benchmarks.md, "Scalar popcount rows").

constexpr std::array kRows{
    DMLBITS_SCALAR_WIDTH(std::uint8_t),          DMLBITS_SCALAR_SWAR_POPCOUNT(std::uint8_t),
    DMLBITS_SCALAR_WIDTH(std::uint16_t),         DMLBITS_SCALAR_SWAR_POPCOUNT(std::uint16_t),
    DMLBITS_SCALAR_WIDTH(std::uint32_t),         DMLBITS_SCALAR_SWAR_POPCOUNT(std::uint32_t),
    DMLBITS_SCALAR_SWAR_POPCOUNT(std::uint64_t), DMLBITS_SCALAR_WIDTH(std::uint64_t),
};
static_assert(rows_of_set(kRows, Isa::scalar));

}  // namespace

std::span<const KernelRow> scalar_kernels() { return kRows; }

}  // namespace dmlbits::cpu
