// JSON tensors. Two input forms:
//   nested arrays             [[0,123],[456,789]]   (shape inferred; dtype supplied by the caller)
//   an object                 {"dtype": "uint32", "shape": [2,2], "data": [...]}  (nested or flat data)
// Integers are exact over the whole int64/uint64 range; every dtype also accepts a string
// "0x..." holding the exact bit pattern; float dtypes accept "nan", "inf" and "-inf". Errors are
// Errc::invalid_input and name the position (`data[1][0]`); callers add the file as context.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dmlbits/tensor.hpp"

namespace dmlbits {

// JSON tensors are for tensors a person reads: both bounds keep a hostile or mistaken input
// (a 10 GB array) from costing unbounded memory or time. Text beyond kMaxJsonInputBytes is
// refused before it is read (io.hpp checks a file's size first and stops reading a pipe at the
// bound); values beyond kMaxJsonValues are refused as the parser meets them. Parsing costs
// about 16 bytes per value, so a document within both bounds needs at most about 64 MiB of
// text plus 128 MiB of values. Errors are Errc::invalid_input, pointing to .npy.
inline constexpr std::uint64_t kMaxJsonInputBytes = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kMaxJsonValues = std::uint64_t{1} << 23;

// The Errc::invalid_input error for JSON text over kMaxJsonInputBytes; `has` says how much
// there is ("this file is 10 GiB", "standard input has more").
[[noreturn]] void fail_json_too_large(std::string_view has);

// Nesting beyond the 8 dimensions a tensor may have is refused as soon as it is seen, so a
// deeply nested document costs neither stack nor memory.
struct JsonReadOptions {
  // dtype for nested-array input (and for objects that do not name one).
  std::optional<DType> default_dtype;
};

// A parsed JSON tensor whose dtype may be decided later: a nested array without a dtype takes
// its dtype from the other operand of an operation.
class JsonTensorDocument {
 public:
  // Checks syntax, nesting, rectangularity and value kinds.
  static JsonTensorDocument parse(std::string_view text);
  JsonTensorDocument(JsonTensorDocument&&) noexcept;
  JsonTensorDocument& operator=(JsonTensorDocument&&) noexcept;
  ~JsonTensorDocument();

  // The dtype the document names, if any (throws on an unknown name).
  std::optional<DType> declared_dtype() const;
  // The tensor, in the declared dtype or else `fallback`; checks shape and value ranges. Without
  // either: OptionError(OptionKey::dtype, OptionRule::needed, "", "json"), for the face to word.
  Tensor to_tensor(std::optional<DType> fallback) const;

  struct Impl;

 private:
  JsonTensorDocument();
  std::unique_ptr<Impl> impl_;
};

Tensor read_json_tensor(std::string_view text, const JsonReadOptions& options = {});

struct JsonWriteOptions {
  bool hex = false;  // every value as a "0x..." string of its bit pattern, zero-padded
};

// The object form, pretty-printed: integers exact, floats as the shortest text that reads back
// to the same bits, NaN and infinities as hex strings (JSON has no literal for them).
std::string write_json_tensor(const TensorView& t, const JsonWriteOptions& options = {});

// One element's bits (zero-extended) as JSON value text.
std::string format_json_value(DType dtype, std::uint64_t bits, bool hex);

// Parses one scalar literal the way a JSON data value is parsed (a number, or a "0x.." / "0b.."
// bit pattern without quotes) and converts it to `dtype`. Used for command-line operands.
std::uint64_t parse_scalar_literal(std::string_view text, DType dtype);

}  // namespace dmlbits
