// DirectML feature levels 1_0 .. 6_4 with DirectML's numeric encoding (DML_FEATURE_LEVEL_x_y =
// 0xXY00), in order.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dmlbits {

class FeatureLevel {
 public:
  constexpr FeatureLevel() = default;
  constexpr FeatureLevel(int major, int minor) : value_((major << 12) | (minor << 8)) {}
  constexpr int major() const { return value_ >> 12; }
  constexpr int minor() const { return (value_ >> 8) & 0xf; }
  constexpr int value() const { return value_; }  // DML_FEATURE_LEVEL enum value
  constexpr auto operator<=>(const FeatureLevel&) const = default;

  std::string short_name() const;  // "4_1"
  std::string enum_name() const;   // "DML_FEATURE_LEVEL_4_1"

 private:
  int value_ = 0;
};

// Every level DirectML defines, oldest first.
std::span<const FeatureLevel> feature_levels();
FeatureLevel newest_feature_level();

// "4.1", "4_1" or "DML_FEATURE_LEVEL_4_1"; nullopt for anything else, including levels
// DirectML does not define (4_2).
std::optional<FeatureLevel> parse_feature_level(std::string_view text);

}  // namespace dmlbits
