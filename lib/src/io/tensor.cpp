#include "dmlbits/tensor.hpp"

#include "dmlbits/memory.hpp"

namespace dmlbits {

AlignedBuffer::AlignedBuffer(std::size_t size)
    : data_(allocate_buffer(size, Prefault::yes), Free{size}) {}

void AlignedBuffer::Free::operator()(std::byte* p) const { free_buffer(p, size); }

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
