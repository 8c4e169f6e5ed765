// Elements' bytes in the other order: big-endian .npy data (npy.cpp) and big-endian NumPy
// arrays borrowed by a run (operand.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace dmlbits {

template <class U>
U byte_swapped(U v) {
  if constexpr (sizeof(U) == 1) return v;
  else if constexpr (sizeof(U) == 2) return __builtin_bswap16(v);
  else if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
  else return __builtin_bswap64(v);
}

#if defined(__SSE2__)
// Each S-byte lane of v byte-swapped. SSE2 (every x86-64 CPU has it), 16 bytes at a time:
// element by element, byte-swapping took about as long as reading the file from the page
// cache (testdata/benchmarks.md, "Byte-swapping and transposing .npy input"), and twice as
// long as NumPy's byte-swapping ufunc loops (issue 37).
template <std::size_t S>
__m128i swapped_lanes(__m128i v) {
  if constexpr (S == 1) return v;
  v = _mm_or_si128(_mm_slli_epi16(v, 8), _mm_srli_epi16(v, 8));  // the bytes of each 16-bit word
  if constexpr (S == 4) {                                        // then the words of each 32-bit lane
    v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0xb1), 0xb1);
  } else if constexpr (S == 8) {  // then the four words of each 64-bit lane, reversed
    v = _mm_shufflehi_epi16(_mm_shufflelo_epi16(v, 0x1b), 0x1b);
  }
  return v;
}
#endif

// `count` elements of U from `src` to `dst`, each byte-swapped; `dst` may be `src` (in place),
// not otherwise overlap it.
template <class U>
void copy_swapped(const std::byte* src, std::byte* dst, std::size_t count) {
  std::size_t i = 0;
#if defined(__SSE2__)
  for (; i + 16 / sizeof(U) <= count; i += 16 / sizeof(U)) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * sizeof(U)));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i * sizeof(U)), swapped_lanes<sizeof(U)>(v));
  }
#endif
  for (; i < count; ++i) {
    U v;
    std::memcpy(&v, src + i * sizeof(U), sizeof v);
    v = byte_swapped(v);
    std::memcpy(dst + i * sizeof(U), &v, sizeof v);
  }
}

}  // namespace dmlbits
