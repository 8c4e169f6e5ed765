#include "dmlbits/ops.hpp"

#include <array>
#include <bit>
#include <cctype>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

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

// The reference functions: the semantics, one element at a time.
constexpr std::uint64_t element_mask(unsigned bits) {
  return bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
}

std::uint64_t ref_and(std::uint64_t a, std::uint64_t b, unsigned, ShiftOverflow) { return a & b; }
std::uint64_t ref_or(std::uint64_t a, std::uint64_t b, unsigned, ShiftOverflow) { return a | b; }
std::uint64_t ref_xor(std::uint64_t a, std::uint64_t b, unsigned, ShiftOverflow) { return a ^ b; }
std::uint64_t ref_not(std::uint64_t a, std::uint64_t, unsigned bits, ShiftOverflow) { return ~a & element_mask(bits); }
// Set bits of the element's encoding: two's complement for signed types (-1 as INT8 -> 8), the
// IEEE pattern for floats.
std::uint64_t ref_popcount(std::uint64_t a, std::uint64_t, unsigned bits, ShiftOverflow) {
  return static_cast<std::uint64_t>(std::popcount(a & element_mask(bits)));
}
// The count is B's whole value. Counts below the width shift alike in every mode; counts of
// the width and more give
// - zero: 0 (NumPy, XLA, ONNX opset 28);
// - wrap: a shift by the count modulo the width (HLSL's rule, at the element's width);
// - directml: what DirectML 1.15.4 computed (directml-under-wine.md in the shared reference;
//   the man page states it): an element of up to 32 bits is shifted as a 32-bit lane by the
//   count's low 5 bits and cut back to its width, so 8- and 16-bit elements give 0 for counts
//   from the width to 31 and wrap from 32; a 64-bit element is shifted by c, the count's low
//   32 bits, if c < 32, and otherwise by 32 and then by c & 31 (64 shifts by 32, 2^32 - 1 by 63).
std::uint64_t shift(std::uint64_t a, std::uint64_t b, unsigned bits, ShiftOverflow overflow, bool left) {
  const std::uint64_t mask = element_mask(bits), value = a & mask;
  const auto by = [left](std::uint64_t v, std::uint64_t count) {
    return left ? v << count : v >> count;
  };  // count < 64
  switch (overflow) {
    case ShiftOverflow::zero:
      return b >= bits ? 0 : by(value, b) & mask;
    case ShiftOverflow::wrap:
      return by(value, b % bits) & mask;
    case ShiftOverflow::directml: {
      if (bits <= 32) return static_cast<std::uint32_t>(by(value, b & 31)) & mask;
      const std::uint64_t c = b & 0xFFFFFFFFu;
      return c < 32 ? by(value, c) : by(by(value, 32), c & 31);
    }
  }
  return 0;  // not reached: every mode is handled above
}
std::uint64_t ref_shl(std::uint64_t a, std::uint64_t b, unsigned bits, ShiftOverflow o) {
  return shift(a, b, bits, o, true);
}
std::uint64_t ref_shr(std::uint64_t a, std::uint64_t b, unsigned bits, ShiftOverflow o) {
  return shift(a, b, bits, o, false);
}

// Rows in OpKind order: op_info() indexes the table by kind. kOpCount rows: an extra row does not
// compile, a missing one is a value-initialised row that rows_in_kind_order() refuses.
constexpr std::array<OpInfo, kOpCount> kOps{{
    {.kind = OpKind::shl,
     .verb = "shl",
     .dml_suffix = "BIT_SHIFT_LEFT",
     .dml_enum = 97,
     .arity = 2,
     .tiers = kShiftTiers,
     .summary = "logical shift left of A by B bits",
     .shift = true,
     .in_place = true,
     .shader = ShaderFamily::shift,
     .kernel_name = "shl",
     .reference = ref_shl,
     .python_name = "left_shift",
     .python_alias = "",
     .symbol = "<<",
     .python_notes = "Unsigned types only, x2 of x1's dtype. Counts at or past the width follow shift_overflow: "
                     "\"directml\" (the default: what DirectML computes), \"zero\" (NumPy's answer) or \"wrap\" "
                     "(the count modulo the width)."},
    {.kind = OpKind::shr,
     .verb = "shr",
     .dml_suffix = "BIT_SHIFT_RIGHT",
     .dml_enum = 98,
     .arity = 2,
     .tiers = kShiftTiers,
     .summary = "logical shift right of A by B bits",
     .shift = true,
     .in_place = true,
     .shader = ShaderFamily::shift,
     .kernel_name = "shr",
     .reference = ref_shr,
     .python_name = "right_shift",
     .python_alias = "",
     .symbol = ">>",
     .python_notes = "Logical (zeros shifted in). Unsigned types only, x2 of x1's dtype; counts at or past the width "
                     "as for left_shift."},
    {.kind = OpKind::bit_and,
     .verb = "and",
     .dml_suffix = "BIT_AND",
     .dml_enum = 121,
     .arity = 2,
     .tiers = kLogicTiers,
     .summary = "bitwise AND of A and B",
     .in_place = true,
     .shader = ShaderFamily::bitwise,
     .kernel_name = "and",
     .reference = ref_and,
     .python_name = "bitwise_and",
     .python_alias = "",
     .symbol = "&",
     .python_notes = "Both operands of one dtype (no promotion); floats as bit patterns."},
    {.kind = OpKind::bit_or,
     .verb = "or",
     .dml_suffix = "BIT_OR",
     .dml_enum = 122,
     .arity = 2,
     .tiers = kLogicTiers,
     .summary = "bitwise OR of A and B",
     .in_place = true,
     .shader = ShaderFamily::bitwise,
     .kernel_name = "or",
     .reference = ref_or,
     .python_name = "bitwise_or",
     .python_alias = "",
     .symbol = "|",
     .python_notes = "Both operands of one dtype (no promotion); floats as bit patterns."},
    {.kind = OpKind::bit_xor,
     .verb = "xor",
     .dml_suffix = "BIT_XOR",
     .dml_enum = 123,
     .arity = 2,
     .tiers = kLogicTiers,
     .summary = "bitwise exclusive OR of A and B",
     .in_place = true,
     .shader = ShaderFamily::bitwise,
     .kernel_name = "xor",
     .reference = ref_xor,
     .python_name = "bitwise_xor",
     .python_alias = "",
     .symbol = "^",
     .python_notes = "Both operands of one dtype (no promotion); floats as bit patterns."},
    {.kind = OpKind::bit_not,
     .verb = "not",
     .dml_suffix = "BIT_NOT",
     .dml_enum = 124,
     .arity = 1,
     .tiers = kLogicTiers,
     .summary = "bitwise complement of A",
     .in_place = true,
     .shader = ShaderFamily::bitwise,
     .kernel_name = "not",
     .reference = ref_not,
     .python_name = "bitwise_not",
     .python_alias = "invert",
     .symbol = "~",
     .python_notes = "Floats as bit patterns."},
    {.kind = OpKind::popcount,
     .verb = "popcount",
     .dml_suffix = "BIT_COUNT",
     .dml_enum = 125,
     .arity = 1,
     .tiers = kPopcountTiers,
     .summary = "number of set bits in each element of A",
     .in_place = false,
     .shader = ShaderFamily::popcount,
     .kernel_name = "popcnt",
     .reference = ref_popcount,
     .python_name = "bitwise_count",
     .python_alias = "popcount",
     .symbol = "",
     .python_notes = "Counts every bit of the stored pattern: int8 -1 gives 8 (NumPy 2's bitwise_count counts the "
                     "absolute value's bits: 1)."},
}};

constexpr bool rows_in_kind_order() {
  for (std::size_t i = 0; i < kOps.size(); ++i)
    if (static_cast<std::size_t>(kOps[i].kind) != i) return false;
  return true;
}
static_assert(rows_in_kind_order(), "kOps rows must follow OpKind's order");

}  // namespace

std::span<const ShiftOverflow> shift_overflow_modes() {
  static constexpr std::array kModes{ShiftOverflow::directml, ShiftOverflow::zero, ShiftOverflow::wrap};
  static_assert(kModes.front() == kDefaultShiftOverflow, "the default mode is listed first");
  return kModes;
}

std::string_view shift_overflow_name(ShiftOverflow m) {
  switch (m) {
    case ShiftOverflow::zero:
      return "zero";
    case ShiftOverflow::wrap:
      return "wrap";
    case ShiftOverflow::directml:
      return "directml";
  }
  return "?";
}

std::optional<ShiftOverflow> parse_shift_overflow(std::string_view name) {
  for (ShiftOverflow m : shift_overflow_modes())
    if (shift_overflow_name(m) == name) return m;
  return std::nullopt;
}

std::string shift_overflow_names_help(std::string_view quote) {
  std::string s;
  const auto modes = shift_overflow_modes();
  for (std::size_t i = 0; i < modes.size(); ++i) {
    s += i == 0 ? "" : i + 1 == modes.size() ? " or " : ", ";
    s.append(quote).append(shift_overflow_name(modes[i])).append(quote);
  }
  return s;
}

DType OpInfo::default_output_dtype(DType input) const {
  if (output_dtype_is_input_dtype()) return input;
  for (const DTypeInfo& row : dtype_table())
    if (tiers.front().outputs.contains(row.dtype)) return row.dtype;
  return input;  // not reached: a non-empty set holds a dtype of the table
}

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

const OpInfo& op_info(OpKind kind) {
  // A program may cast any number to an OpKind: refused as the library refuses what it is
  // handed, never as std::out_of_range.
  const auto i = static_cast<std::size_t>(kind);
  if (i >= kOps.size())
    throw Error(Errc::usage, fmt::format("operator {} is not in the operator table (0 to {})", i, kOps.size() - 1));
  return kOps[i];
}

const OpInfo* find_op(std::string_view name) {
  for (const auto& op : kOps) {
    if (op.verb == name) return &op;
    for (const auto& alias : op.aliases())
      if (alias == name) return &op;
  }
  return nullptr;
}

}  // namespace dmlbits
