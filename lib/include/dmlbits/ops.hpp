// The operator table: the seven DML_ELEMENT_WISE_BIT_* operators, each row everything dmlbits
// knows of one: verb and DirectML names, arity, support tiers by feature level (which give the
// input and output types), whether B is a shift count, whether the output may alias A, the GPU
// shader family, the CPU kernels' name, and the reference function, which is the executable
// specification every kernel and shader is tested against. Validation, the CLI's verbs and help,
// `dmlbits ops`, the man page's table, the backends and the test enumeration all read this
// table. lib/docs/adding-an-operator.md lists the few places an operator is added.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/dtype.hpp"

// DirectML feature levels 1_0 .. 6_4 with DirectML's numeric encoding (DML_FEATURE_LEVEL_x_y =
// 0xXY00), in order.
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

namespace dmlbits {

enum class OpKind : std::uint8_t { shl, shr, bit_and, bit_or, bit_xor, bit_not, popcount };
// How many operators there are: one past the last enumerator, where a new operator goes
// (lib/docs/adding-an-operator.md), so this line names the new one. Every table with a row per
// operator is sized from it: the operator table (ops.cpp, which refuses to compile with a row
// too many and fails its static_assert with one too few) and the CPU kernel choice tables.
inline constexpr std::size_t kOpCount = static_cast<std::size_t>(OpKind::popcount) + 1;

// What shift counts >= the element width produce. DirectML documents nothing; `directml` is
// what DirectML 1.15.4 was measured to compute (its shader-model-5.1 path under wine, vkd3d and
// lavapipe; the man page states the rule and its caveat), `zero` gives 0 (NumPy, ONNX opset 28)
// and `wrap` takes the count modulo the width. The reference functions (ops.cpp) define each.
enum class ShiftOverflow : std::uint8_t { zero, wrap, directml };
// The mode a request, a command line or a manifest case gets when it names none: DirectML's,
// since dmlbits promises DirectML's results. The one place the default is chosen.
inline constexpr ShiftOverflow kDefaultShiftOverflow = ShiftOverflow::directml;
// Every mode, the default first (for help text, errors and test enumeration).
std::span<const ShiftOverflow> shift_overflow_modes();
std::string_view shift_overflow_name(ShiftOverflow m);  // "directml", "zero", "wrap"
std::optional<ShiftOverflow> parse_shift_overflow(std::string_view name);
// "directml, zero or wrap" (each name between two `quote`s): for help and error messages.
std::string shift_overflow_names_help(std::string_view quote = "");

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

// One element of an operator's result: A's and B's raw bits (B is 0 for a unary operator),
// `bits` wide (8, 16, 32 or 64) and zero-extended; returns the result's bits, or for popcount the
// count. The operators act on bits whatever the dtype.
using ReferenceFn = std::uint64_t (*)(std::uint64_t a, std::uint64_t b, unsigned bits, ShiftOverflow overflow);

// The compute-shader program family that runs an operator on the d3d12 backend (shaders/*.cpp),
// or none: the d3d12 backend then reports the operator unsupported, and `auto` uses the CPU.
enum class ShaderFamily : std::uint8_t { none, bitwise, shift, popcount };

struct OpInfo {
  OpKind kind;
  std::string_view verb;        // "and"
  std::string_view dml_suffix;  // "BIT_AND", as in DML_OPERATOR_ELEMENT_WISE_BIT_AND
  int dml_enum;                 // DML_OPERATOR_TYPE value
  int arity;
  std::span<const OpTier> tiers;  // oldest level first
  std::string_view summary;
  bool shift = false;     // B is a shift count: --shift-overflow applies
  bool in_place = false;  // the output may alias input A (DirectML's docs: all but BIT_COUNT)
  ShaderFamily shader = ShaderFamily::none;
  std::string_view kernel_name;  // the CPU kernels' operation name: "and" in x32_and__avx2
  ReferenceFn reference = nullptr;
  // The faces' words, from which they are generated: the Python function (NumPy's name where
  // NumPy has the operator) and its other name ("" for none), C's operator symbol ("" for none:
  // an expression calls the operator by its verb), and what a Python user must know of its
  // semantics beyond `summary`, in Python's words (its docstring, the Python guide).
  std::string_view python_name;   // "bitwise_and"
  std::string_view python_alias;  // "invert" for not, "popcount" for bitwise_count
  std::string_view symbol;        // "&", "~", "<<"
  std::string_view python_notes;

  std::string dml_operator_name() const;  // "DML_OPERATOR_ELEMENT_WISE_BIT_AND"
  std::string dml_desc_name() const;      // "DML_ELEMENT_WISE_BIT_AND_OPERATOR_DESC"
  // Other names the verb answers to: "bit-and", "BIT_AND", "DML_OPERATOR_ELEMENT_WISE_BIT_AND".
  std::vector<std::string> aliases() const;
  // The DirectML desc's tensor field names: {"ATensor", "BTensor"} or {"InputTensor"}.
  std::vector<std::string_view> input_field_names() const;
  bool output_dtype_is_input_dtype() const { return tiers.front().outputs.empty(); }
  // The output's dtype when none is requested: the input's, or for an operator with output
  // types of its own the first of them in the dtype table (popcount: UINT8).
  DType default_output_dtype(DType input) const;
  // The tier in force at `level`, or nullptr before the operator was introduced.
  const OpTier* tier_at(FeatureLevel level) const;
  FeatureLevel introduced() const { return tiers.front().level; }
  bool allows_in_place() const { return in_place; }
};

std::span<const OpInfo> op_table();
const OpInfo& op_info(OpKind kind);
// By verb or any alias; nullptr if unknown.
const OpInfo* find_op(std::string_view name);

// The support table as the JSON document `dmlbits ops --json` prints and the Python module's
// `ops()` returns (one writer for both; indented by 2): the feature levels, the dtypes, the
// shift-overflow modes (the default first) and each operator's row (verb, DirectML names,
// aliases, arity, whether B is a shift count, whether the output may alias A, whether the d3d12
// backend has a shader for it, the default output type, and its tiers, or with `level` the tier
// in force there). The tests enumerate the operators and their properties from it.
std::string ops_json_text(std::optional<FeatureLevel> level);

}  // namespace dmlbits
