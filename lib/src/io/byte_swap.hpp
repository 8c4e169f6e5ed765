// An element's bytes in the other order: big-endian .npy data (npy.cpp) and big-endian NumPy
// arrays borrowed by a run (operand.cpp).
#pragma once

#include <cstdint>

namespace dmlbits {

template <class U>
U byte_swapped(U v) {
  if constexpr (sizeof(U) == 1) return v;
  else if constexpr (sizeof(U) == 2) return __builtin_bswap16(v);
  else if constexpr (sizeof(U) == 4) return __builtin_bswap32(v);
  else return __builtin_bswap64(v);
}

}  // namespace dmlbits
