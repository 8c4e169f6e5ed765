#include "dmlbits/dtype.hpp"

#include <array>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

using K = DTypeKind;
// DirectML enum values from DirectML.h (DML_TENSOR_DATA_TYPE).
constexpr std::array<DTypeInfo, kDTypeCount> kTable{{
    {DType::uint8, "UINT8", 5, "uint8", K::unsigned_int, 1},
    {DType::uint16, "UINT16", 4, "uint16", K::unsigned_int, 2},
    {DType::uint32, "UINT32", 3, "uint32", K::unsigned_int, 4},
    {DType::uint64, "UINT64", 10, "uint64", K::unsigned_int, 8},
    {DType::int8, "INT8", 8, "int8", K::signed_int, 1},
    {DType::int16, "INT16", 7, "int16", K::signed_int, 2},
    {DType::int32, "INT32", 6, "int32", K::signed_int, 4},
    {DType::int64, "INT64", 11, "int64", K::signed_int, 8},
    {DType::float16, "FLOAT16", 2, "float16", K::floating, 2},
    {DType::float32, "FLOAT32", 1, "float32", K::floating, 4},
    {DType::float64, "FLOAT64", 9, "float64", K::floating, 8},
}};

}  // namespace

std::string DTypeInfo::numpy_code() const { return fmt::format("{}{}", static_cast<char>(kind), size); }

std::string DTypeInfo::numpy_descr() const { return fmt::format("{}{}", size == 1 ? '|' : '<', numpy_code()); }

std::span<const DTypeInfo> dtype_table() { return kTable; }

const DTypeInfo& dtype_info(DType t) {
  const auto i = static_cast<std::size_t>(t);
  if (i >= kTable.size())
    throw Error(Errc::usage, fmt::format("data type {} is not in the data type table (0 to {})", i, kTable.size() - 1));
  return kTable[i];
}

std::optional<DType> parse_dtype_name(std::string_view name) {
  constexpr std::string_view kDmlPrefix = "DML_TENSOR_DATA_TYPE_";
  if (name.starts_with(kDmlPrefix)) {
    name.remove_prefix(kDmlPrefix.size());
    for (const auto& row : kTable)
      if (row.dml_name == name) return row.dtype;
    return std::nullopt;
  }
  std::string_view code = name;
  if (!code.empty() && (code[0] == '<' || code[0] == '>' || code[0] == '=' || code[0] == '|')) code.remove_prefix(1);
  for (const auto& row : kTable) {
    if (row.dml_name == name || row.numpy_name == name || row.numpy_code() == code) return row.dtype;
  }
  return std::nullopt;
}

std::string dtype_names_help() {
  std::string out;
  for (const auto& row : kTable) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{}|{}|{}", row.numpy_name, row.numpy_code(), row.dml_name);
  }
  return out;
}

std::string DTypeSet::to_string() const {
  std::string out;
  for (const auto& row : kTable) {
    if (!contains(row.dtype)) continue;
    if (!out.empty()) out += ", ";
    out += row.dml_name;
  }
  return out;
}

}  // namespace dmlbits
