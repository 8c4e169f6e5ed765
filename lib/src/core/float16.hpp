// IEEE 754 binary16 conversions, in portable code (no F16C needed): exact widening and
// round-to-nearest-even narrowing, used by the JSON codec for FLOAT16 values.
#pragma once

#include <cstdint>

namespace dmlbits {

float half_to_float(std::uint16_t h);
// Rounds to nearest, ties to even. Values beyond the half range become infinity; NaN stays NaN
// (quiet, sign kept).
std::uint16_t double_to_half(double d);

}  // namespace dmlbits
