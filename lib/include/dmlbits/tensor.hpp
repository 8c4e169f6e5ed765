// Tensors: a dtype, a shape and C-order (row-major) data in native byte order. Tensor owns
// 64-byte-aligned storage; TensorView and MutableTensorView borrow it (or any other memory) and
// never outlive what they borrow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "dmlbits/dtype.hpp"
#include "dmlbits/shape.hpp"

namespace dmlbits {

inline constexpr std::size_t kTensorAlignment = 64;

// Uninitialised, 64-byte-aligned bytes, from allocate_buffer (memory.hpp): a large buffer
// has huge pages and is resident from the start (Prefault::yes), because every AlignedBuffer is
// written whole soon after (a read, an execution), and a timed execution should not pay the
// page faults of its output.
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t size);
  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  std::size_t size() const { return data_.get_deleter().size; }

 private:
  struct Free {
    // 0 in an empty buffer: unique_ptr value-initialises its deleter. (An initialiser here would
    // keep Free from being default-constructible within AlignedBuffer, where unique_ptr needs it.)
    std::size_t size;
    void operator()(std::byte* p) const;
  };
  std::unique_ptr<std::byte, Free> data_;
};

struct TensorView {
  DType dtype{};
  Shape shape;
  const std::byte* data = nullptr;  // element_count * element size bytes

  std::uint64_t element_count() const { return shape.element_count(); }
  std::size_t byte_size() const { return static_cast<std::size_t>(shape.byte_size(dtype_info(dtype).size)); }
  std::span<const std::byte> bytes() const { return {data, byte_size()}; }
};

struct MutableTensorView {
  DType dtype{};
  Shape shape;
  std::byte* data = nullptr;

  std::size_t byte_size() const { return static_cast<std::size_t>(shape.byte_size(dtype_info(dtype).size)); }
  operator TensorView() const { return {dtype, shape, data}; }
};

// A tensor in the caller's memory (a NumPy array's buffer), borrowed for one run and never
// freed by dmlbits. `strides` are bytes per step of each dimension (empty: C order); a
// C-contiguous tensor is read in place, any other layout is copied once into aligned memory.
struct BorrowedTensor {
  DType dtype{};
  Shape shape;
  std::vector<std::int64_t> strides;
  const std::byte* data = nullptr;
  // The same memory when the caller lets a run write over it (in place), else null.
  std::byte* writable = nullptr;

  bool c_contiguous() const;
};

// An operand as a face gives it: text as on the command line (a path, "-" for standard input, a
// literal "5", "0xff", "[1,2,3]"), or a borrowed tensor.
using Operand = std::variant<std::string, BorrowedTensor>;

class Tensor {
 public:
  Tensor() = default;
  // Storage for shape.element_count() elements, uninitialised; throws if the size overflows.
  Tensor(DType dtype, Shape shape);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::uint64_t element_count() const { return shape_.element_count(); }
  std::size_t byte_size() const { return byte_size_; }
  std::byte* data() { return storage_.data(); }
  const std::byte* data() const { return storage_.data(); }

  TensorView view() const { return {dtype_, shape_, storage_.data()}; }
  MutableTensorView mutable_view() { return {dtype_, shape_, storage_.data()}; }

  // Element i's bits, zero-extended to 64 bits (native byte order).
  std::uint64_t bits_at(std::size_t i) const;
  void set_bits_at(std::size_t i, std::uint64_t bits);

 private:
  DType dtype_{};
  Shape shape_;
  std::size_t byte_size_ = 0;
  AlignedBuffer storage_;
};

// Element i of `data` (element width `size` bytes) as zero-extended bits.
inline std::uint64_t load_bits(const std::byte* data, std::size_t size, std::size_t i) {
  switch (size) {
    case 1: { std::uint8_t v; std::memcpy(&v, data + i, 1); return v; }
    case 2: { std::uint16_t v; std::memcpy(&v, data + 2 * i, 2); return v; }
    case 4: { std::uint32_t v; std::memcpy(&v, data + 4 * i, 4); return v; }
    default: { std::uint64_t v; std::memcpy(&v, data + 8 * i, 8); return v; }
  }
}

inline void store_bits(std::byte* data, std::size_t size, std::size_t i, std::uint64_t bits) {
  switch (size) {
    case 1: { auto v = static_cast<std::uint8_t>(bits); std::memcpy(data + i, &v, 1); break; }
    case 2: { auto v = static_cast<std::uint16_t>(bits); std::memcpy(data + 2 * i, &v, 2); break; }
    case 4: { auto v = static_cast<std::uint32_t>(bits); std::memcpy(data + 4 * i, &v, 4); break; }
    default: { std::memcpy(data + 8 * i, &bits, 8); break; }
  }
}

}  // namespace dmlbits
