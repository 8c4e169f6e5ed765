#include "dmlbits/ops.hpp"

#include <array>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

constexpr std::array<FeatureLevel, 15> kLevels{{
    {1, 0},
    {2, 0},
    {2, 1},
    {3, 0},
    {3, 1},
    {4, 0},
    {4, 1},
    {5, 0},
    {5, 1},
    {5, 2},
    {6, 0},
    {6, 1},
    {6, 2},
    {6, 3},
    {6, 4},
}};

}  // namespace

std::string FeatureLevel::short_name() const { return fmt::format("{}_{}", major(), minor()); }

std::string FeatureLevel::enum_name() const { return "DML_FEATURE_LEVEL_" + short_name(); }

std::span<const FeatureLevel> feature_levels() { return kLevels; }

FeatureLevel newest_feature_level() { return kLevels.back(); }

std::optional<FeatureLevel> parse_feature_level(std::string_view text) {
  constexpr std::string_view kPrefix = "DML_FEATURE_LEVEL_";
  const bool prefixed = text.starts_with(kPrefix);
  if (prefixed) text.remove_prefix(kPrefix.size());
  if (text.size() != 3 || text[0] < '0' || text[0] > '9' || text[2] < '0' || text[2] > '9') return std::nullopt;
  if (text[1] != '_' && (prefixed || text[1] != '.')) return std::nullopt;
  const FeatureLevel level(text[0] - '0', text[2] - '0');
  for (const auto& l : kLevels)
    if (l == level) return l;
  return std::nullopt;
}

}  // namespace dmlbits
