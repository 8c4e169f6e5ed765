// IEEE 754 binary16 conversions (dmlbits/float16.hpp): exhaustive over all 65536 half patterns,
// plus rounding cases computed by hand.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "float16.hpp"

namespace dmlbits {
namespace {

bool is_nan_bits(std::uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x03ff) != 0; }

// The value of a finite or infinite half from the definition: (-1)^s * 2^(e-15) * 1.m, or
// 2^-14 * 0.m for e = 0. Written independently of the code under test.
double half_value(std::uint16_t h) {
  const int sign = (h & 0x8000) ? -1 : 1;
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  if (e == 0x1f) return sign * std::numeric_limits<double>::infinity();
  if (e == 0) return sign * std::ldexp(m, -24);
  return sign * std::ldexp(1024 + m, e - 25);
}

TEST(Float16Test, HalfToFloatIsExactForEveryPattern) {
  for (std::uint32_t i = 0; i < 0x10000; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    const float f = half_to_float(h);
    if (is_nan_bits(h)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << i;
      continue;
    }
    ASSERT_EQ(static_cast<double>(f), half_value(h)) << std::hex << i;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << i;  // -0.0 keeps its sign
  }
}

TEST(Float16Test, EveryNonNaNPatternRoundTrips) {
  int checked = 0;
  for (std::uint32_t i = 0; i < 0x10000; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    if (is_nan_bits(h)) continue;
    ASSERT_EQ(double_to_half(half_to_float(h)), h) << std::hex << i;
    ++checked;
  }
  EXPECT_EQ(checked, 65536 - 2 * 1023);
}

TEST(Float16Test, NaNStaysNaN) {
  for (std::uint32_t i = 0; i < 0x10000; ++i) {
    const auto h = static_cast<std::uint16_t>(i);
    if (!is_nan_bits(h)) continue;
    const float f = half_to_float(h);
    ASSERT_TRUE(std::isnan(f)) << std::hex << i;
    ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << i;
    // Widening keeps the payload in the top mantissa bits (as F16C's vcvtph2ps does).
    ASSERT_EQ(std::bit_cast<std::uint32_t>(f) & 0x007fe000u, static_cast<std::uint32_t>(h & 0x3ff) << 13);
    const std::uint16_t back = double_to_half(f);
    ASSERT_TRUE(is_nan_bits(back)) << std::hex << i << " -> " << back;
    ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << i;
    ASSERT_NE(back & 0x0200, 0) << "quiet NaN expected, got " << std::hex << back;
  }
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::quiet_NaN()) & 0x8000, 0);
  EXPECT_TRUE(is_nan_bits(double_to_half(std::numeric_limits<double>::signaling_NaN())));
  EXPECT_EQ(double_to_half(-std::numeric_limits<double>::quiet_NaN()) & 0x8000, 0x8000);
}

TEST(Float16Test, KnownValues) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x03ff), std::ldexp(1023.0f, -24));
  EXPECT_EQ(half_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_to_float(0xfc00), -std::numeric_limits<float>::infinity());

  EXPECT_EQ(double_to_half(0.0), 0x0000);
  EXPECT_EQ(double_to_half(-0.0), 0x8000);
  EXPECT_EQ(double_to_half(1.0), 0x3c00);
  EXPECT_EQ(double_to_half(-2.0), 0xc000);
  EXPECT_EQ(double_to_half(0.5), 0x3800);
  EXPECT_EQ(double_to_half(0.1), 0x2e66);      // 1.6 * 2^-4: mantissa 614.4 -> 614
  EXPECT_EQ(double_to_half(1.0 / 3), 0x3555);  // mantissa 341.33 -> 341
  EXPECT_EQ(double_to_half(65504.0), 0x7bff);
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -14)), 0x0400);
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::infinity()), 0x7c00);
  EXPECT_EQ(double_to_half(-std::numeric_limits<double>::infinity()), 0xfc00);
}

TEST(Float16Test, RoundsTiesToEvenOnHandComputedCases) {
  // Between 1 (0x3c00) and 1 + 2^-10 (0x3c01) the tie 1 + 2^-11 goes to the even 0x3c00.
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00);
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3c01);
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11) - std::ldexp(1.0, -40)), 0x3c00);
  // Between 0x3c01 and 0x3c02 the tie goes up to the even 0x3c02.
  EXPECT_EQ(double_to_half(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);
  EXPECT_EQ(double_to_half(-(1.0 + 3 * std::ldexp(1.0, -11))), 0xbc02);
  // At 2^11 the spacing is 2: 2049 ties to 2048 (0x6800), 2051 to 2052 (0x6802).
  EXPECT_EQ(double_to_half(2049.0), 0x6800);
  EXPECT_EQ(double_to_half(2051.0), 0x6802);
  EXPECT_EQ(double_to_half(2050.0), 0x6801);
  // Subnormals (spacing 2^-24): 0.5 ulp ties to 0, 1.5 to 2, 2.5 to 2.
  EXPECT_EQ(double_to_half(std::ldexp(0.5, -24)), 0x0000);
  EXPECT_EQ(double_to_half(-std::ldexp(0.5, -24)), 0x8000);
  EXPECT_EQ(double_to_half(std::ldexp(0.5, -24) + std::ldexp(1.0, -60)), 0x0001);
  EXPECT_EQ(double_to_half(std::ldexp(1.5, -24)), 0x0002);
  EXPECT_EQ(double_to_half(std::ldexp(2.5, -24)), 0x0002);
  // 1023.5 * 2^-24 sits between the largest subnormal 0x03ff and the smallest normal 0x0400.
  EXPECT_EQ(double_to_half(std::ldexp(1023.5, -24)), 0x0400);
  EXPECT_EQ(double_to_half(std::ldexp(1022.5, -24)), 0x03fe);
  // The top: 65520 ties between 65504 (0x7bff, odd) and 2^16 (even, = infinity).
  EXPECT_EQ(double_to_half(65519.99), 0x7bff);
  EXPECT_EQ(double_to_half(65520.0), 0x7c00);
  EXPECT_EQ(double_to_half(-65520.0), 0xfc00);
  EXPECT_EQ(double_to_half(1e10), 0x7c00);
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::max()), 0x7c00);
  // Far below the smallest subnormal: signed zero.
  EXPECT_EQ(double_to_half(1e-30), 0x0000);
  EXPECT_EQ(double_to_half(-1e-30), 0x8000);
  EXPECT_EQ(double_to_half(std::numeric_limits<double>::denorm_min()), 0x0000);
  EXPECT_EQ(double_to_half(-std::numeric_limits<double>::min()), 0x8000);
}

TEST(Float16Test, EveryMidpointRoundsToEven) {
  // For each pair of adjacent positive halves (a, b), the exact midpoint goes to whichever has
  // an even pattern, and anything just off it goes to the nearer one. The last pair is the
  // largest finite half and 2^16, where rounding gives infinity.
  for (std::uint32_t lo = 0; lo < 0x7c00; ++lo) {
    const double a = half_value(static_cast<std::uint16_t>(lo));
    const double b = lo == 0x7bff ? 65536.0 : half_value(static_cast<std::uint16_t>(lo + 1));
    const double mid = (a + b) / 2;  // exact: halves have 11-bit significands
    const auto even = static_cast<std::uint16_t>((lo & 1) ? lo + 1 : lo);
    ASSERT_EQ(double_to_half(mid), even) << std::hex << lo;
    ASSERT_EQ(double_to_half(-mid), even | 0x8000) << std::hex << lo;
    ASSERT_EQ(double_to_half(std::nextafter(mid, 0.0)), lo) << std::hex << lo;
    ASSERT_EQ(double_to_half(std::nextafter(mid, 1e300)), lo + 1) << std::hex << lo;
  }
}

TEST(Float16Test, FloatInputsBehaveLikeDoubles) {
  // Callers pass floats too (promoted to double): the float nearest 0.1 still gives 0x2e66.
  EXPECT_EQ(double_to_half(0.1f), 0x2e66);
  EXPECT_EQ(double_to_half(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(double_to_half(std::numeric_limits<float>::denorm_min()), 0x0000);
}

}  // namespace
}  // namespace dmlbits
