#include "dmlbits/error.hpp"

#include <iterator>

#include <fmt/format.h>

namespace dmlbits {

std::string format_byte_size(std::uint64_t bytes, bool with_exact_count) {
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} byte{}", bytes, bytes == 1 ? "" : "s");
  double v = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  if (bytes % (std::uint64_t{1024} << (10 * unit)) == 0) return fmt::format("{} {}", v, kUnits[unit]);
  if (!with_exact_count) return fmt::format("{:.1f} {}", v, kUnits[unit]);
  return fmt::format("{:.1f} {} ({} bytes)", v, kUnits[unit], bytes);
}

}  // namespace dmlbits
