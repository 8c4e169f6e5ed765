// The data-type table: the 11 DirectML tensor data types and everything dmlbits needs to know
// about each (DirectML name and enum value, NumPy name and descr code, element size). Parsing,
// printing, validation and the tests all read this one table.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dmlbits {

enum class DType : std::uint8_t {
  uint8,
  uint16,
  uint32,
  uint64,
  int8,
  int16,
  int32,
  int64,
  float16,
  float32,
  float64,
};

inline constexpr std::size_t kDTypeCount = 11;

enum class DTypeKind : char { unsigned_int = 'u', signed_int = 'i', floating = 'f' };

struct DTypeInfo {
  DType dtype;
  std::string_view dml_name;    // "UINT8" (DML_TENSOR_DATA_TYPE_UINT8)
  int dml_value;                // DML_TENSOR_DATA_TYPE enum value
  std::string_view numpy_name;  // "uint8"
  DTypeKind kind;
  std::size_t size;  // bytes per element

  // NumPy's descr without byte order ("u1", "f4").
  std::string numpy_code() const;
  // NumPy's descr as dmlbits writes it: little-endian, '|' for one-byte types ("|u1", "<f4").
  std::string numpy_descr() const;
  std::string dml_enum_name() const { return "DML_TENSOR_DATA_TYPE_" + std::string(dml_name); }
  unsigned bits() const { return static_cast<unsigned>(size * 8); }
};

// All rows, in DType order.
std::span<const DTypeInfo> dtype_table();
const DTypeInfo& dtype_info(DType t);

// A user-facing name: NumPy's ("uint8", "u1", "<u4", "=i2", "|u1") or DirectML's ("UINT8",
// "DML_TENSOR_DATA_TYPE_UINT8"); names are case-sensitive as in NumPy and DirectML.
std::optional<DType> parse_dtype_name(std::string_view name);
// Every accepted spelling, for help texts and tests.
std::string dtype_names_help();

// A set of dtypes as a bitmask.
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  constexpr DTypeSet(std::initializer_list<DType> types) {
    for (DType t : types) bits_ |= bit(t);
  }
  constexpr bool contains(DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr DTypeSet operator|(DTypeSet o) const { return from_bits(bits_ | o.bits_); }
  constexpr bool operator==(const DTypeSet&) const = default;
  constexpr std::uint32_t raw() const { return bits_; }
  // Names in table order, joined with ", " (DirectML names).
  std::string to_string() const;

 private:
  static constexpr std::uint32_t bit(DType t) { return 1u << static_cast<unsigned>(t); }
  static constexpr DTypeSet from_bits(std::uint32_t b) {
    DTypeSet s;
    s.bits_ = b;
    return s;
  }
  std::uint32_t bits_ = 0;
};

namespace dtypes {
inline constexpr DTypeSet kUnsigned8To32{DType::uint8, DType::uint16, DType::uint32};
inline constexpr DTypeSet kUnsigned{DType::uint8, DType::uint16, DType::uint32, DType::uint64};
inline constexpr DTypeSet kAll{DType::uint8, DType::uint16, DType::uint32,  DType::uint64,  DType::int8,   DType::int16,
                               DType::int32, DType::int64,  DType::float16, DType::float32, DType::float64};
inline constexpr DTypeSet kPopcountOutputs{DType::uint8, DType::uint32};
}  // namespace dtypes

}  // namespace dmlbits

// Tensor shapes: 0 to 8 dimensions. Element counts and byte sizes are computed with overflow
// checks; an overflow is an invalid-input Error, never a wrapped number.
namespace dmlbits {

inline constexpr std::size_t kMaxRank = 8;

class Shape {
 public:
  Shape() = default;  // 0-d: one element
  Shape(std::initializer_list<std::uint64_t> dims);
  explicit Shape(std::span<const std::uint64_t> dims);  // throws if more than kMaxRank dims

  std::size_t rank() const { return rank_; }
  std::uint64_t operator[](std::size_t i) const { return dims_[i]; }
  std::uint64_t& operator[](std::size_t i) { return dims_[i]; }
  std::span<const std::uint64_t> dims() const { return {dims_.data(), rank_}; }
  void push_back(std::uint64_t d);  // throws past kMaxRank

  // Product of the dimensions (1 for 0-d); throws Errc::invalid_input on overflow.
  std::uint64_t element_count() const;
  // element_count() * element_size, checked; also refuses sizes beyond the address space.
  std::uint64_t byte_size(std::size_t element_size) const;

  // NumPy's tuple notation: "()", "(3,)", "(2, 3)".
  std::string to_string() const;
  // JSON-ish list notation: "[]", "[3]", "[2,3]".
  std::string to_list_string() const;

  bool operator==(const Shape& o) const;

 private:
  std::array<std::uint64_t, kMaxRank> dims_{};
  std::size_t rank_ = 0;
};

// NumPy's broadcast of two shapes, or nullopt if they are incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace dmlbits
