#include "byte_size.hpp"

#include <cstdlib>
#include <iterator>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};

// `bytes` (1024 or more) in the largest binary unit that fits: the value and the unit's index.
struct Scaled {
  double value;
  std::size_t unit;
};
Scaled scaled(std::uint64_t bytes) {
  Scaled s{static_cast<double>(bytes) / 1024, 0};
  while (s.value >= 1024 && s.unit + 1 < std::size(kUnits)) {
    s.value /= 1024;
    ++s.unit;
  }
  return s;
}

std::uint64_t unit_bytes(std::size_t unit) { return std::uint64_t{1024} << (10 * unit); }

}  // namespace

std::string format_byte_size(std::uint64_t bytes, bool with_exact_count) {
  if (bytes < 1024) return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
  const Scaled s = scaled(bytes);
  if (bytes % unit_bytes(s.unit) == 0) return fmt::format("{} {}", s.value, kUnits[s.unit]);
  if (!with_exact_count) return fmt::format("{:.1f} {}", s.value, kUnits[s.unit]);
  return fmt::format("{:.1f} {} ({} bytes)", s.value, kUnits[s.unit], bytes);
}

std::string format_byte_size_below(std::uint64_t bytes, std::uint64_t bound) {
  // The figure format_byte_size shows, from its own rounding ("16.0" MiB), against the bound.
  double shown = static_cast<double>(bytes);
  if (bytes >= 1024) {
    const Scaled s = scaled(bytes);
    shown = std::strtod(fmt::format("{:.1f}", s.value).c_str(), nullptr) * static_cast<double>(unit_bytes(s.unit));
  }
  if (shown < static_cast<double>(bound)) return format_byte_size(bytes, false);
  return fmt::format("{} bytes", bytes);
}

}  // namespace dmlbits
