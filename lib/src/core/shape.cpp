#include "dmlbits/dtype.hpp"
#include "checked_mul.hpp"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {

Shape::Shape(std::initializer_list<std::uint64_t> dims) : Shape(std::span(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const std::uint64_t> dims) {
  for (auto d : dims) push_back(d);
}

void Shape::push_back(std::uint64_t d) {
  if (rank_ == kMaxRank) throw Error(Errc::invalid_input, fmt::format("more than {} dimensions", kMaxRank));
  dims_[rank_++] = d;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw Error(Errc::invalid_input, fmt::format("{} overflows 64 bits", what));
  return r;
}

std::uint64_t Shape::element_count() const {
  // A zero dimension makes the product 0 whatever the others are, but the others must still
  // not overflow on their own; check the product of the non-zero dimensions.
  std::uint64_t n = 1;
  bool zero = false;
  for (std::size_t i = 0; i < rank_; ++i) {
    if (dims_[i] == 0) {
      zero = true;
      continue;
    }
    if (__builtin_mul_overflow(n, dims_[i], &n))
      throw Error(Errc::invalid_input, fmt::format("shape {} has too many elements (overflows 64 bits)", to_string()));
  }
  return zero ? 0 : n;
}

std::uint64_t Shape::byte_size(std::size_t element_size) const {
  const std::uint64_t n = element_count();
  std::uint64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(element_size), &bytes) ||
      bytes > static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max()))
    throw Error(Errc::invalid_input,
                fmt::format("shape {} is too large ({} elements of {} bytes)", to_string(), n, element_size));
  return bytes;
}

std::string Shape::to_string() const {
  if (rank_ == 1) return fmt::format("({},)", dims_[0]);
  return fmt::format("({})", fmt::join(dims(), ", "));
}

std::string Shape::to_list_string() const { return fmt::format("[{}]", fmt::join(dims(), ",")); }

bool Shape::operator==(const Shape& o) const {
  if (rank_ != o.rank_) return false;
  for (std::size_t i = 0; i < rank_; ++i)
    if (dims_[i] != o.dims_[i]) return false;
  return true;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.rank(), b.rank());
  Shape out;
  for (std::size_t i = 0; i < rank; ++i) {
    // Align from the right.
    const std::uint64_t da = i + a.rank() >= rank ? a[i + a.rank() - rank] : 1;
    const std::uint64_t db = i + b.rank() >= rank ? b[i + b.rank() - rank] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

}  // namespace dmlbits
