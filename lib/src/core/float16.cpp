#include "float16.hpp"

#include <bit>
#include <cmath>

namespace dmlbits {

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    // Zero or subnormal: man * 2^-24, exact in float.
    const float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

std::uint16_t double_to_half(double d) {
  const std::uint16_t sign = std::signbit(d) ? 0x8000 : 0;
  if (std::isnan(d)) {
    // NumPy's rule (npy_double_to_half): the payload's top 10 bits, kept a NaN, no quiet bit
    // added; so np.float16(x) and a literal of x give the same bits, payloads included.
    const std::uint64_t fraction = std::bit_cast<std::uint64_t>(d) & 0x000fffffffffffffu;
    const auto top = static_cast<std::uint16_t>(fraction >> 42);
    return static_cast<std::uint16_t>(sign | 0x7c00 | (top == 0 ? 1 : top));
  }
  const double a = std::fabs(d);
  if (std::isinf(a)) return sign | 0x7c00;
  if (a < 0x1p-14) {
    // Subnormal range: units of 2^-24; a result of 1024 is the smallest normal, which is also
    // its correct encoding.
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(a * 0x1p24)));
  }
  int e2 = 0;
  const double f = std::frexp(a, &e2);                  // a = f * 2^e2, f in [0.5, 1)
  int e = e2 - 1;                                       // a in [2^e, 2^(e+1))
  double m = std::nearbyint((f * 2.0 - 1.0) * 1024.0);  // exact scaling, then ties-to-even
  if (m >= 1024.0) {
    m = 0.0;
    ++e;
  }
  if (e + 15 >= 31) return sign | 0x7c00;
  return static_cast<std::uint16_t>(sign | ((e + 15) << 10) | static_cast<unsigned>(m));
}

}  // namespace dmlbits
