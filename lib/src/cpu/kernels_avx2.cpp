// AVX2 kernels: 256-bit vectors. Every function here carries target("avx2") and has internal
// linkage; the file is compiled with the program's ordinary flags.
#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#define DMLBITS_TARGET __attribute__((target("avx2")))
#include "kernel_loops.hpp"

namespace dmlbits::cpu {
namespace {

struct V {
  using reg = __m256i;
  static constexpr std::size_t kBytes = 32;
  DMLBITS_TARGET static reg load(const std::byte* p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)); }
  DMLBITS_TARGET static void store(std::byte* p, reg v) { _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v); }
  DMLBITS_TARGET static void stream(std::byte* p, reg v) { _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v); }
  DMLBITS_TARGET static void fence() { _mm_sfence(); }
  template <class T>
  DMLBITS_TARGET static reg splat(T v) {
    if constexpr (sizeof(T) == 1) return _mm256_set1_epi8(static_cast<char>(v));
    else if constexpr (sizeof(T) == 2) return _mm256_set1_epi16(static_cast<short>(v));
    else if constexpr (sizeof(T) == 4) return _mm256_set1_epi32(static_cast<int>(v));
    else return _mm256_set1_epi64x(static_cast<long long>(v));
  }
  DMLBITS_TARGET static reg bit_not(reg v) { return _mm256_xor_si256(v, _mm256_set1_epi32(-1)); }
  // Shifts of T lanes in mode M (below, "shifts").
  template <bool kLeft, class T, ShiftOverflow M>
  DMLBITS_TARGET static reg shift(reg a, reg b);
  // Store kinds of the unary blocks (kernel_loops.hpp): ordinary unaligned stores, or
  // non-temporal ones to addresses aligned to their size.
  struct Stored {
    DMLBITS_TARGET static void store_vector(std::byte* p, reg v) { store256(p, v); }
    DMLBITS_TARGET static void store256(std::byte* p, __m256i v) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), v);
    }
    DMLBITS_TARGET static void store128(std::byte* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }
  };
  struct Streaming {
    DMLBITS_TARGET static void store_vector(std::byte* p, reg v) { store256(p, v); }
    DMLBITS_TARGET static void store256(std::byte* p, __m256i v) {
      _mm256_stream_si256(reinterpret_cast<__m256i*>(p), v);
    }
    DMLBITS_TARGET static void store128(std::byte* p, __m128i v) { _mm_stream_si128(reinterpret_cast<__m128i*>(p), v); }
  };
};
using reg = V::reg;

DMLBITS_TARGET inline reg bytes8(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }
DMLBITS_TARGET inline reg words16(int v) { return _mm256_set1_epi16(static_cast<short>(v)); }
DMLBITS_TARGET inline reg dwords32(unsigned v) { return _mm256_set1_epi32(static_cast<int>(v)); }

// ---- and, or, xor: one instruction whatever the width ----

template <class, class, ShiftOverflow>
struct AndOp {
  static constexpr bool kUsesMode = false;
  DMLBITS_TARGET static reg apply(reg a, reg b) { return _mm256_and_si256(a, b); }
};
template <class, class, ShiftOverflow>
struct OrOp {
  static constexpr bool kUsesMode = false;
  DMLBITS_TARGET static reg apply(reg a, reg b) { return _mm256_or_si256(a, b); }
};
template <class, class, ShiftOverflow>
struct XorOp {
  static constexpr bool kUsesMode = false;
  DMLBITS_TARGET static reg apply(reg a, reg b) { return _mm256_xor_si256(a, b); }
};

// ---- shifts ----
// The count is B's whole unsigned value. vpsllv/vpsrlv (32, 64 bits) already give 0 for counts
// >= the width, which is ShiftOverflow::zero; wrap masks the count first. 16-bit lanes have no
// variable shift in AVX2: each 32-bit lane is shifted twice, once per half, and the halves are
// masked back together (a count of 16..65535 then empties its half, as it must). 8-bit lanes
// are shifted by 1, 2 and 4 under the control of the count's bits 0..2 (vpblendvb reads each
// byte's top bit, so the count is first shifted so that bit k lands there); zero mode then
// clears the bytes whose count is 8 or more.
// ShiftOverflow::directml (ops.cpp has the rule) is zero mode on the count's low 5 bits for
// 8 to 32 bits: bytes are cleared when count bit 3 or 4 is set, 16-bit counts are masked to
// 0..31 (16..31 empty their half), 32-bit ones to 0..31 as in wrap. 64 bits: see
// directml_count64.

template <bool kLeft, unsigned kBits>
DMLBITS_TARGET inline reg shift_bytes_by(reg x) {
  if constexpr (kLeft) return _mm256_and_si256(_mm256_slli_epi16(x, kBits), bytes8((0xFF << kBits) & 0xFF));
  else return _mm256_and_si256(_mm256_srli_epi16(x, kBits), bytes8(0xFF >> kBits));
}

template <bool kLeft, ShiftOverflow M>
DMLBITS_TARGET inline reg shift8(reg a, reg b) {
  reg x = a;
  x = _mm256_blendv_epi8(x, shift_bytes_by<kLeft, 1>(x), _mm256_slli_epi16(b, 7));
  x = _mm256_blendv_epi8(x, shift_bytes_by<kLeft, 2>(x), _mm256_slli_epi16(b, 6));
  x = _mm256_blendv_epi8(x, shift_bytes_by<kLeft, 4>(x), _mm256_slli_epi16(b, 5));
  if constexpr (M != ShiftOverflow::wrap) {
    // Bytes whose count is 8 or more (zero), or whose count & 31 is (directml), become 0.
    const int over = M == ShiftOverflow::zero ? 0xF8 : 0x18;
    const reg in_range = _mm256_cmpeq_epi8(_mm256_and_si256(b, bytes8(over)), _mm256_setzero_si256());
    x = _mm256_and_si256(x, in_range);
  }
  return x;
}

template <bool kLeft, ShiftOverflow M>
DMLBITS_TARGET inline reg shift16(reg a, reg b) {
  if constexpr (M == ShiftOverflow::wrap) b = _mm256_and_si256(b, words16(15));
  if constexpr (M == ShiftOverflow::directml) b = _mm256_and_si256(b, words16(31));
  const reg lo_mask = dwords32(0x0000FFFFu);
  const reg hi_mask = dwords32(0xFFFF0000u);
  const reg count_lo = _mm256_and_si256(b, lo_mask);
  const reg count_hi = _mm256_srli_epi32(b, 16);
  if constexpr (kLeft) {
    const reg lo = _mm256_and_si256(_mm256_sllv_epi32(a, count_lo), lo_mask);
    const reg hi = _mm256_sllv_epi32(_mm256_and_si256(a, hi_mask), count_hi);
    return _mm256_or_si256(lo, hi);
  } else {
    const reg lo = _mm256_srlv_epi32(_mm256_and_si256(a, lo_mask), count_lo);
    const reg hi = _mm256_and_si256(_mm256_srlv_epi32(a, count_hi), hi_mask);
    return _mm256_or_si256(lo, hi);
  }
}

// directml's 64-bit count: with c the count's low 32 bits, c if c < 32, else 32 + (c & 31).
// That is min(c, 32 | (c & 31)) in the low dword (32 | (c & 31) <= c exactly when c >= 32),
// and min(high dword, 0) = 0 clears the high one: three instructions.
DMLBITS_TARGET inline reg directml_count64(reg b) {
  return _mm256_min_epu32(b, _mm256_or_si256(_mm256_and_si256(b, _mm256_set1_epi64x(31)), _mm256_set1_epi64x(32)));
}

template <bool kLeft, class T, ShiftOverflow M>
DMLBITS_TARGET inline reg V::shift(reg a, reg b) {
  if constexpr (sizeof(T) == 1) {
    return shift8<kLeft, M>(a, b);
  } else if constexpr (sizeof(T) == 2) {
    return shift16<kLeft, M>(a, b);
  } else if constexpr (sizeof(T) == 4) {
    if constexpr (M != ShiftOverflow::zero) b = _mm256_and_si256(b, dwords32(31));  // wrap, directml
    return kLeft ? _mm256_sllv_epi32(a, b) : _mm256_srlv_epi32(a, b);
  } else {
    if constexpr (M == ShiftOverflow::wrap) b = _mm256_and_si256(b, _mm256_set1_epi64x(63));
    if constexpr (M == ShiftOverflow::directml) b = directml_count64(b);
    return kLeft ? _mm256_sllv_epi64(a, b) : _mm256_srlv_epi64(a, b);
  }
}

// ---- popcount ----
// Bytes are counted with two 16-entry table lookups (vpshufb), one per nibble; wider counts add
// neighbouring byte counts with the multiply-add instructions (vpmaddubsw: pairs of bytes into
// 16 bits, vpmaddwd: pairs of words into 32, vpsadbw: eight bytes into 64), then the counts are
// narrowed or widened to the output type. Large outputs are written with non-temporal stores
// (S = V::Streaming), like the binary kernels' (kernel_loops.hpp).

// The high nibble is brought down with a shift (vpsrlw), or with kMul by a multiply (vpmulhuw
// by 2^12 of the word with the low nibbles cleared): the same result on the multiply units,
// which relieves the shuffle units that the lookups and the packing below compete for.
template <bool kMul = false>
DMLBITS_TARGET inline reg count8(reg v) {
  const reg lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,  //
                                   0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
  const reg nibble = bytes8(0x0F);
  const reg lo = _mm256_and_si256(v, nibble);
  reg hi;
  if constexpr (kMul) hi = _mm256_mulhi_epu16(_mm256_andnot_si256(nibble, v), words16(0x1000));
  else hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
  return _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi));
}
DMLBITS_TARGET inline reg count16(reg v) { return _mm256_maddubs_epi16(count8(v), bytes8(1)); }
DMLBITS_TARGET inline reg count32(reg v) { return _mm256_madd_epi16(count16(v), words16(1)); }
DMLBITS_TARGET inline reg count64(reg v) { return _mm256_sad_epu8(count8(v), _mm256_setzero_si256()); }

template <class T, class Out>
struct PopcntOp;

template <>
struct PopcntOp<std::uint8_t, std::uint8_t> {
  using In = std::uint8_t;
  using Out = std::uint8_t;
  static constexpr std::size_t kElems = 32;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store256(out, count8(V::load(in)));
  }
};

template <>
struct PopcntOp<std::uint8_t, std::uint32_t> {
  using In = std::uint8_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 32;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    const reg c = count8(V::load(in));
    const __m128i lo = _mm256_castsi256_si128(c);
    const __m128i hi = _mm256_extracti128_si256(c, 1);
    S::store256(out, _mm256_cvtepu8_epi32(lo));
    S::store256(out + 32, _mm256_cvtepu8_epi32(_mm_srli_si128(lo, 8)));
    S::store256(out + 64, _mm256_cvtepu8_epi32(hi));
    S::store256(out + 96, _mm256_cvtepu8_epi32(_mm_srli_si128(hi, 8)));
  }
};

template <>
struct PopcntOp<std::uint16_t, std::uint8_t> {
  using In = std::uint16_t;
  using Out = std::uint8_t;
  static constexpr std::size_t kElems = 32;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    // vpackuswb packs within 128-bit lanes; the permute puts the four quarters back in order.
    const reg packed = _mm256_packus_epi16(count16(V::load(in)), count16(V::load(in + 32)));
    S::store256(out, _mm256_permute4x64_epi64(packed, 0xD8));
  }
};

template <>
struct PopcntOp<std::uint16_t, std::uint32_t> {
  using In = std::uint16_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 16;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    const reg c = count16(V::load(in));
    S::store256(out, _mm256_cvtepu16_epi32(_mm256_castsi256_si128(c)));
    S::store256(out + 32, _mm256_cvtepu16_epi32(_mm256_extracti128_si256(c, 1)));
  }
};

template <>
struct PopcntOp<std::uint32_t, std::uint8_t> {
  using In = std::uint32_t;
  using Out = std::uint8_t;
  static constexpr std::size_t kElems = 32;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    // Pairs of byte counts into words (each <= 16, so they fit a byte again), packed to bytes:
    // each element's two half-counts are then neighbours, and a second vpmaddubsw adds them.
    // Two packs and two multiply-adds instead of four vpmaddwd and two 32-bit packs: fewer
    // shuffle-port instructions per vector (testdata/benchmarks.md, "AVX2 32-bit popcount packing").
    // Packing works within 128-bit lanes: the permute restores the order.
    const reg one = bytes8(1);
    const reg w0 = _mm256_maddubs_epi16(count8<true>(V::load(in)), one);
    const reg w1 = _mm256_maddubs_epi16(count8<true>(V::load(in + 32)), one);
    const reg w2 = _mm256_maddubs_epi16(count8<true>(V::load(in + 64)), one);
    const reg w3 = _mm256_maddubs_epi16(count8<true>(V::load(in + 96)), one);
    const reg q0 = _mm256_maddubs_epi16(_mm256_packus_epi16(w0, w1), one);
    const reg q1 = _mm256_maddubs_epi16(_mm256_packus_epi16(w2, w3), one);
    const reg packed = _mm256_packus_epi16(q0, q1);
    S::store256(out, _mm256_permutevar8x32_epi32(packed, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  }
};

template <>
struct PopcntOp<std::uint32_t, std::uint32_t> {
  using In = std::uint32_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 8;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    S::store256(out, count32(V::load(in)));
  }
};

template <>
struct PopcntOp<std::uint64_t, std::uint8_t> {
  using In = std::uint64_t;
  using Out = std::uint8_t;
  static constexpr std::size_t kElems = 16;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    // Counts are < 256: gather vector k's count of element e into byte k of qword e, take the
    // low dwords, then transpose the 4x4 bytes.
    reg t = count64(V::load(in));
    t = _mm256_or_si256(t, _mm256_slli_epi64(count64(V::load(in + 32)), 8));
    t = _mm256_or_si256(t, _mm256_slli_epi64(count64(V::load(in + 64)), 16));
    t = _mm256_or_si256(t, _mm256_slli_epi64(count64(V::load(in + 96)), 24));
    const __m128i lows =
        _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(t, _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6)));
    S::store128(out, _mm_shuffle_epi8(lows, _mm_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15)));
  }
};

template <>
struct PopcntOp<std::uint64_t, std::uint32_t> {
  using In = std::uint64_t;
  using Out = std::uint32_t;
  static constexpr std::size_t kElems = 8;
  template <class S = V::Stored>
  DMLBITS_TARGET static void block(const std::byte* in, std::byte* out) {
    const reg t = _mm256_or_si256(count64(V::load(in)), _mm256_slli_epi64(count64(V::load(in + 32)), 32));
    S::store256(out, _mm256_permutevar8x32_epi32(t, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
  }
};

template <class T, class Out>
using FusedPopcnt = PopcntOp<T, Out>;

}  // namespace
}  // namespace dmlbits::cpu

#include "fused_loops.hpp"

namespace dmlbits::cpu {
namespace {

constexpr Isa kIsa = Isa::avx2;
using Policy = Avx2StreamPolicy;
constexpr const char* kTag = "avx2";

constexpr std::array kRows{DMLBITS_SET_ROWS};
static_assert(rows_of_set(kRows, kIsa));

constexpr std::array kFusedRows{DMLBITS_FUSED_ROWS};

}  // namespace

std::span<const KernelRow> avx2_kernels() { return kRows; }
std::span<const FusedLoopRow> avx2_fused_loops() { return kFusedRows; }

}  // namespace dmlbits::cpu
