// The operator table: the seven DML_ELEMENT_WISE_BIT_* operators with their verbs, DirectML
// names and enum values, arity, and support tiers by feature level. Validation, the CLI's verbs
// and help, `dmlbits ops`, the man page's table and the test enumeration all read this table;
// an operator is added here (plus its reference function in cpu_reference.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/dtype.hpp"
#include "dmlbits/feature_level.hpp"

namespace dmlbits {

enum class OpKind : std::uint8_t { shl, shr, bit_and, bit_or, bit_xor, bit_not, popcount };

// What shift counts >= the element width produce (DirectML does not say; see the man page).
enum class ShiftOverflow : std::uint8_t { zero, wrap };
std::string_view shift_overflow_name(ShiftOverflow m);

struct DimRange {
  std::uint8_t min, max;
  constexpr bool contains(std::size_t n) const { return n >= min && n <= max; }
};

// What an operator accepts from `level` until the next tier's level.
struct OpTier {
  FeatureLevel level;
  DimRange dims;
  DTypeSet inputs;
  DTypeSet outputs;  // empty: the output has the inputs' dtype
};

struct OpInfo {
  OpKind kind;
  std::string_view verb;        // "and"
  std::string_view dml_suffix;  // "BIT_AND", as in DML_OPERATOR_ELEMENT_WISE_BIT_AND
  int dml_enum;                 // DML_OPERATOR_TYPE value
  int arity;
  std::span<const OpTier> tiers;  // oldest level first
  std::string_view summary;

  std::string dml_operator_name() const;  // "DML_OPERATOR_ELEMENT_WISE_BIT_AND"
  std::string dml_desc_name() const;      // "DML_ELEMENT_WISE_BIT_AND_OPERATOR_DESC"
  // Other names the verb answers to: "bit-and", "BIT_AND", "DML_OPERATOR_ELEMENT_WISE_BIT_AND".
  std::vector<std::string> aliases() const;
  // The DirectML desc's tensor field names: {"ATensor", "BTensor"} or {"InputTensor"}.
  std::vector<std::string_view> input_field_names() const;
  bool output_dtype_is_input_dtype() const { return tiers.front().outputs.empty(); }
  // The tier in force at `level`, or nullptr before the operator was introduced.
  const OpTier* tier_at(FeatureLevel level) const;
  FeatureLevel introduced() const { return tiers.front().level; }
  // Output may alias an input buffer (every op but popcount, per DirectML's docs).
  bool allows_in_place() const { return kind != OpKind::popcount; }
};

std::span<const OpInfo> op_table();
const OpInfo& op_info(OpKind kind);
// By verb or any alias; nullptr if unknown.
const OpInfo* find_op(std::string_view name);

}  // namespace dmlbits
