// Internal: the AVX-512 (F + BW + VL) vector type and operations, shared by the AVX-512 kernel
// files (kernels_avx512*.cpp), which differ only in the extensions their popcount may use.
// Include after defining DMLBITS_TARGET and including kernel_loops.hpp.
#pragma once

// GCC 12's avx512*intrin.h build many intrinsics on _mm512_undefined_*() ("__m512i __Y = __Y"),
// which -O3 reports as -Wmaybe-uninitialized, and at some uses as -Wuninitialized, once inlined
// (GCC bug 105593, fixed in GCC 13): the self-initialisation is the header's deliberate way of
// saying "any value", not a bug of ours, and -DDMLBITS_WERROR=ON must build with Debian 12's
// GCC. Only the AVX-512 kernel files include this header.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "kernel_loops.hpp"

namespace dmlbits::cpu {
namespace {

struct V {
  using reg = __m512i;
  static constexpr std::size_t kBytes = 64;
  DMLBITS_TARGET static reg load(const std::byte* p) { return _mm512_loadu_si512(p); }
  DMLBITS_TARGET static void store(std::byte* p, reg v) { _mm512_storeu_si512(p, v); }
  DMLBITS_TARGET static void stream(std::byte* p, reg v) { _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v); }
  DMLBITS_TARGET static void fence() { _mm_sfence(); }
  template <class T>
  DMLBITS_TARGET static reg splat(T v) {
    if constexpr (sizeof(T) == 1) return _mm512_set1_epi8(static_cast<char>(v));
    else if constexpr (sizeof(T) == 2) return _mm512_set1_epi16(static_cast<short>(v));
    else if constexpr (sizeof(T) == 4) return _mm512_set1_epi32(static_cast<int>(v));
    else return _mm512_set1_epi64(static_cast<long long>(v));
  }
  DMLBITS_TARGET static reg bit_not(reg v) { return _mm512_xor_si512(v, _mm512_set1_epi32(-1)); }
  // Shifts of T lanes in mode M (below, "Shifts").
  template <bool kLeft, class T, ShiftOverflow M>
  DMLBITS_TARGET static reg shift(reg a, reg b);
  // Store kinds of the unary blocks (kernel_loops.hpp): ordinary unaligned stores, or
  // non-temporal ones to addresses aligned to their size, so that large unary outputs, like
  // binary ones, do not read each output line before overwriting it (testdata/benchmarks.md,
  // "CPU streaming policies": "AVX-512 unary store kinds").
  struct Stored {
    DMLBITS_TARGET static void store_vector(std::byte* p, reg v) { store512(p, v); }
    DMLBITS_TARGET static void store512(std::byte* p, __m512i v) { _mm512_storeu_si512(p, v); }
    DMLBITS_TARGET static void store256(std::byte* p, __m256i v) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    }
    DMLBITS_TARGET static void store128(std::byte* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  };
  struct Streaming {
    DMLBITS_TARGET static void store_vector(std::byte* p, reg v) { store512(p, v); }
    DMLBITS_TARGET static void store512(std::byte* p, __m512i v) {
      _mm512_stream_si512(reinterpret_cast<__m512i*>(p), v);
    }
    DMLBITS_TARGET static void store256(std::byte* p, __m256i v) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
    }
    DMLBITS_TARGET static void store128(std::byte* p, __m128i v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), v); }
  };
};
using reg = V::reg;

DMLBITS_TARGET inline reg bytes8(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }
DMLBITS_TARGET inline reg words16(int v) { return _mm512_set1_epi16(static_cast<short>(v)); }

template <class, class, ShiftOverflow>
struct AndOp {
  static constexpr bool kUsesMode = false;
  DMLBITS_TARGET static reg apply(reg a, reg b) { return _mm512_and_si512(a, b); }
};
template <class, class, ShiftOverflow>
struct OrOp {
  static constexpr bool kUsesMode = false;
  DMLBITS_TARGET static reg apply(reg a, reg b) { return _mm512_or_si512(a, b); }
};
template <class, class, ShiftOverflow>
struct XorOp {
  static constexpr bool kUsesMode = false;
  DMLBITS_TARGET static reg apply(reg a, reg b) { return _mm512_xor_si512(a, b); }
};

// Shifts: vpsllvw/vpsllvd/vpsllvq (and the right shifts) treat the count as unsigned and give 0
// for counts >= the width, which is ShiftOverflow::zero; wrap masks the count first. Bytes
// have no variable shift: each 16-bit lane is shifted twice, once per byte, and the bytes are
// masked back together (counts 8..255 empty their byte, as they must). directml (ops.cpp has
// the rule) is zero mode on the count's low 5 bits up to 32 bits, so a mask by 31; 64 bits:
// see directml_count64.
template <bool kLeft, ShiftOverflow M>
DMLBITS_TARGET inline reg shift8(reg a, reg b) {
  if constexpr (M == ShiftOverflow::wrap) b = _mm512_and_si512(b, bytes8(7));
  if constexpr (M == ShiftOverflow::directml) b = _mm512_and_si512(b, bytes8(31));
  const reg lo_mask = words16(0x00FF);
  const reg hi_mask = words16(0xFF00);
  const reg count_lo = _mm512_and_si512(b, lo_mask);
  const reg count_hi = _mm512_srli_epi16(b, 8);
  if constexpr (kLeft) {
    const reg lo = _mm512_and_si512(_mm512_sllv_epi16(a, count_lo), lo_mask);
    const reg hi = _mm512_sllv_epi16(_mm512_and_si512(a, hi_mask), count_hi);
    return _mm512_or_si512(lo, hi);
  } else {
    const reg lo = _mm512_srlv_epi16(_mm512_and_si512(a, lo_mask), count_lo);
    const reg hi = _mm512_and_si512(_mm512_srlv_epi16(a, count_hi), hi_mask);
    return _mm512_or_si512(lo, hi);
  }
}

// directml's 64-bit count: with c the count's low 32 bits, c if c < 32, else 32 + (c & 31).
// That is min(c, 32 | (c & 31)) in the low dword (32 | (c & 31) <= c exactly when c >= 32),
// and min(high dword, 0) = 0 clears the high one.
DMLBITS_TARGET inline reg directml_count64(reg b) {
  return _mm512_min_epu32(b, _mm512_or_si512(_mm512_and_si512(b, _mm512_set1_epi64(31)), _mm512_set1_epi64(32)));
}

template <bool kLeft, class T, ShiftOverflow M>
DMLBITS_TARGET inline reg V::shift(reg a, reg b) {
  if constexpr (sizeof(T) == 1) {
    return shift8<kLeft, M>(a, b);
  } else if constexpr (sizeof(T) == 2) {
    if constexpr (M == ShiftOverflow::wrap) b = _mm512_and_si512(b, words16(15));
    if constexpr (M == ShiftOverflow::directml) b = _mm512_and_si512(b, words16(31));
    return kLeft ? _mm512_sllv_epi16(a, b) : _mm512_srlv_epi16(a, b);
  } else if constexpr (sizeof(T) == 4) {
    if constexpr (M != ShiftOverflow::zero) b = _mm512_and_si512(b, _mm512_set1_epi32(31));  // wrap, directml
    return kLeft ? _mm512_sllv_epi32(a, b) : _mm512_srlv_epi32(a, b);
  } else {
    if constexpr (M == ShiftOverflow::wrap) b = _mm512_and_si512(b, _mm512_set1_epi64(63));
    if constexpr (M == ShiftOverflow::directml) b = directml_count64(b);
    return kLeft ? _mm512_sllv_epi64(a, b) : _mm512_srlv_epi64(a, b);
  }
}

// Popcount with only F + BW + VL: nibble table lookups per byte (vpshufb), then neighbouring
// byte counts added (vpmaddubsw into 16 bits, vpmaddwd into 32, vpsadbw into 64).
struct LutCounter {
  DMLBITS_TARGET static reg count8(reg v) {
    // Bytes 0..15 of each 128-bit lane: 0 1 1 2 1 2 2 3 1 2 2 3 2 3 3 4 (little-endian dwords).
    const reg lut = _mm512_set4_epi32(0x04030302, 0x03020201, 0x03020201, 0x02010100);
    const reg nibble = bytes8(0x0F);
    const reg lo = _mm512_and_si512(v, nibble);
    const reg hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
    return _mm512_add_epi8(_mm512_shuffle_epi8(lut, lo), _mm512_shuffle_epi8(lut, hi));
  }
  DMLBITS_TARGET static reg count16(reg v) { return _mm512_maddubs_epi16(count8(v), bytes8(1)); }
  DMLBITS_TARGET static reg count32(reg v) { return _mm512_madd_epi16(count16(v), words16(1)); }
  DMLBITS_TARGET static reg count64(reg v) { return _mm512_sad_epu8(count8(v), _mm512_setzero_si512()); }
};

// Counts in lanes of the input width, then narrowed (vpmov*) or widened (vpmovzx*). C counts:
// LutCounter unless a file with a popcount extension names its own.
template <class T, class Out, class C = LutCounter>
struct PopcntOp;

template <class C>
struct PopcntOp<std::uint8_t, std::uint8_t, C> {
  using In = std::uint8_t;
  using Out = std::uint8_t;
  static constexpr std::size_t kElems = 64;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store512(out, C::count8(V::load(in)));
  }
};

template <class C>
struct PopcntOp<std::uint8_t, std::uint32_t, C> {
  using In = std::uint8_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 64;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    const reg c = C::count8(V::load(in));
    S::store512(out, _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(c, 0)));
    S::store512(out + 64, _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(c, 1)));
    S::store512(out + 128, _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(c, 2)));
    S::store512(out + 192, _mm512_cvtepu8_epi32(_mm512_extracti32x4_epi32(c, 3)));
  }
};

template <class C>
struct PopcntOp<std::uint16_t, std::uint8_t, C> {
  using In = std::uint16_t;
  using Out = std::uint8_t;
  static constexpr std::size_t kElems = 32;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store256(out, _mm512_cvtepi16_epi8(C::count16(V::load(in))));
  }
};

template <class C>
struct PopcntOp<std::uint16_t, std::uint32_t, C> {
  using In = std::uint16_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 32;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    const reg c = C::count16(V::load(in));
    S::store512(out, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(c, 0)));
    S::store512(out + 64, _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(c, 1)));
  }
};

template <class C>
struct PopcntOp<std::uint32_t, std::uint8_t, C> {
  using In = std::uint32_t;
  using Out = std::uint8_t;
  static constexpr std::size_t kElems = 16;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store128(out, _mm512_cvtepi32_epi8(C::count32(V::load(in))));
  }
};

template <class C>
struct PopcntOp<std::uint32_t, std::uint32_t, C> {
  using In = std::uint32_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 16;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store512(out, C::count32(V::load(in)));
  }
};

template <class C>
struct PopcntOp<std::uint64_t, std::uint8_t, C> {
  using In = std::uint64_t;
  using Out = std::uint8_t;
  // Two vectors per block, so that a block writes 16 bytes: the narrowest non-temporal store.
  static constexpr std::size_t kElems = 16;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    const __m128i lo = _mm512_cvtepi64_epi8(C::count64(V::load(in)));
    const __m128i hi = _mm512_cvtepi64_epi8(C::count64(V::load(in + 64)));
    S::store128(out, _mm_unpacklo_epi64(lo, hi));
  }
};

template <class C>
struct PopcntOp<std::uint64_t, std::uint32_t, C> {
  using In = std::uint64_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 8;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store256(out, _mm512_cvtepi64_epi32(C::count64(V::load(in))));
  }
};

constexpr Isa kIsa = Isa::avx512;
using Policy = Avx512StreamPolicy;

}  // namespace
}  // namespace dmlbits::cpu
