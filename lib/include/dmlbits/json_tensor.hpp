// JSON tensors. Two input forms:
//   nested arrays             [[0,123],[456,789]]   (shape inferred; dtype supplied by the caller)
//   an object                 {"dtype": "uint32", "shape": [2,2], "data": [...]}  (nested or flat data)
// Integers are exact over the whole int64/uint64 range; every dtype also accepts a string
// "0x..." holding the exact bit pattern; float dtypes accept "nan", "inf" and "-inf". Errors are
// Errc::invalid_input and name the position (`data[1][0]`); callers add the file as context.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "dmlbits/tensor.hpp"

namespace dmlbits {

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
  // The tensor, in the declared dtype or else `fallback`; checks shape and value ranges.
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
