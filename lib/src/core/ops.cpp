#include "dmlbits/ops.hpp"

#include <array>
#include <cctype>

namespace dmlbits {
namespace {

using dtypes::kAll;
using dtypes::kPopcountOutputs;
using dtypes::kUnsigned;
using dtypes::kUnsigned8To32;

// From the DirectML API reference (DML_ELEMENT_WISE_BIT_*_OPERATOR_DESC availability and
// tensor support tables); nothing changes after 4_1.
constexpr DimRange kAnyDims{1, 8};
constexpr std::array<OpTier, 3> kShiftTiers{{
    {{2, 1}, {4, 4}, kUnsigned8To32, {}},
    {{3, 0}, kAnyDims, kUnsigned8To32, {}},
    {{4, 1}, kAnyDims, kUnsigned, {}},
}};
constexpr std::array<OpTier, 2> kLogicTiers{{
    {{3, 0}, kAnyDims, kUnsigned8To32, {}},
    {{4, 1}, kAnyDims, kAll, {}},
}};
constexpr std::array<OpTier, 2> kPopcountTiers{{
    {{3, 0}, kAnyDims, kUnsigned8To32, kPopcountOutputs},
    {{4, 1}, kAnyDims, kAll, kPopcountOutputs},
}};

constexpr std::array<OpInfo, 7> kOps{{
    {OpKind::shl, "shl", "BIT_SHIFT_LEFT", 97, 2, kShiftTiers, "logical shift left of A by B bits"},
    {OpKind::shr, "shr", "BIT_SHIFT_RIGHT", 98, 2, kShiftTiers, "logical shift right of A by B bits"},
    {OpKind::bit_and, "and", "BIT_AND", 121, 2, kLogicTiers, "bitwise AND of A and B"},
    {OpKind::bit_or, "or", "BIT_OR", 122, 2, kLogicTiers, "bitwise OR of A and B"},
    {OpKind::bit_xor, "xor", "BIT_XOR", 123, 2, kLogicTiers, "bitwise exclusive OR of A and B"},
    {OpKind::bit_not, "not", "BIT_NOT", 124, 1, kLogicTiers, "bitwise complement of A"},
    {OpKind::popcount, "popcount", "BIT_COUNT", 125, 1, kPopcountTiers, "number of set bits in each element of A"},
}};

}  // namespace

std::string_view shift_overflow_name(ShiftOverflow m) { return m == ShiftOverflow::zero ? "zero" : "wrap"; }

std::string OpInfo::dml_operator_name() const { return "DML_OPERATOR_ELEMENT_WISE_" + std::string(dml_suffix); }

std::string OpInfo::dml_desc_name() const { return "DML_ELEMENT_WISE_" + std::string(dml_suffix) + "_OPERATOR_DESC"; }

std::vector<std::string> OpInfo::aliases() const {
  std::string kebab(dml_suffix);
  for (auto& c : kebab) c = c == '_' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return {kebab, std::string(dml_suffix), dml_operator_name()};
}

std::vector<std::string_view> OpInfo::input_field_names() const {
  if (arity == 2) return {"ATensor", "BTensor"};
  return {"InputTensor"};
}

const OpTier* OpInfo::tier_at(FeatureLevel level) const {
  const OpTier* found = nullptr;
  for (const auto& t : tiers)
    if (t.level <= level) found = &t;
  return found;
}

std::span<const OpInfo> op_table() { return kOps; }

const OpInfo& op_info(OpKind kind) { return kOps.at(static_cast<std::size_t>(kind)); }

const OpInfo* find_op(std::string_view name) {
  for (const auto& op : kOps) {
    if (op.verb == name) return &op;
    for (const auto& alias : op.aliases())
      if (alias == name) return &op;
  }
  return nullptr;
}

}  // namespace dmlbits
