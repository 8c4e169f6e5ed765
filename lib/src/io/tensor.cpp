#include "dmlbits/tensor.hpp"

#include "memory.hpp"

namespace dmlbits {

AlignedBuffer::AlignedBuffer(std::size_t size) : data_(allocate_buffer(size, Prefault::yes), Free{size}) {}

void AlignedBuffer::Free::operator()(std::byte* p) const { free_buffer(p, size); }

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype),
      shape_(shape),
      byte_size_(static_cast<std::size_t>(shape.byte_size(dtype_info(dtype).size))),
      storage_(byte_size_) {}

std::uint64_t Tensor::bits_at(std::size_t i) const { return load_bits(data(), dtype_info(dtype_).size, i); }

void Tensor::set_bits_at(std::size_t i, std::uint64_t bits) { store_bits(data(), dtype_info(dtype_).size, i, bits); }

bool BorrowedTensor::c_contiguous() const {
  if (strides.empty()) return true;
  if (strides.size() != shape.rank()) return false;
  std::int64_t step = static_cast<std::int64_t>(dtype_info(dtype).size);
  for (std::size_t d = shape.rank(); d-- > 0;) {
    if (shape[d] != 1 && strides[d] != step) return false;  // a dimension of one may have any stride
    step *= static_cast<std::int64_t>(shape[d]);
  }
  return true;
}

}  // namespace dmlbits
