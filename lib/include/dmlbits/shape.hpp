// Tensor shapes: 0 to 8 dimensions. Element counts and byte sizes are computed with overflow
// checks; an overflow is an invalid-input Error, never a wrapped number.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>

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

// a * b, or throws Errc::invalid_input with `what` in the message.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what);

// NumPy's broadcast of two shapes, or nullopt if they are incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

}  // namespace dmlbits
