#include "dmlbits/tensor.hpp"

#include <new>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {

AlignedBuffer::AlignedBuffer(std::size_t size) : size_(size) {
  // Round up so that size 0 still yields a valid, unique, aligned pointer.
  const std::size_t alloc = (size + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  void* p = ::operator new(alloc == 0 ? kTensorAlignment : alloc, std::align_val_t{kTensorAlignment},
                           std::nothrow);
  if (p == nullptr)
    throw Error(Errc::io, fmt::format("out of memory allocating {} bytes", size));
  data_.reset(static_cast<std::byte*>(p));
}

void AlignedBuffer::Free::operator()(std::byte* p) const {
  ::operator delete(p, std::align_val_t{kTensorAlignment});
}

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype),
      shape_(shape),
      byte_size_(static_cast<std::size_t>(shape.byte_size(dtype_info(dtype).size))),
      storage_(byte_size_) {}

std::uint64_t Tensor::bits_at(std::size_t i) const { return load_bits(data(), dtype_info(dtype_).size, i); }

void Tensor::set_bits_at(std::size_t i, std::uint64_t bits) {
  store_bits(data(), dtype_info(dtype_).size, i, bits);
}

}  // namespace dmlbits
