// allocate_buffer and free_buffer, the same on every system: small buffers from the aligned
// heap, from kMappedBufferBytes up mapped on their own (mapped_memory.hpp).
#include "memory.hpp"

#include <new>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "mapped_memory.hpp"

namespace dmlbits {
namespace {

constexpr std::size_t kSmallAlignment = 64;  // kTensorAlignment, without including tensor.hpp

}  // namespace

std::byte* allocate_buffer(std::size_t size, Prefault fault) {
  void* p = nullptr;
  if (size >= kMappedBufferBytes) {
    p = allocate_mapping(size, fault);
  } else {
    // Round up so that size 0 still yields a valid, unique, aligned pointer.
    const std::size_t alloc =
        size == 0 ? kSmallAlignment : (size + kSmallAlignment - 1) / kSmallAlignment * kSmallAlignment;
    p = ::operator new (alloc, std::align_val_t{kSmallAlignment}, std::nothrow);
  }
  if (p == nullptr) throw Error(Errc::io, fmt::format("out of memory allocating {} bytes", size));
  return static_cast<std::byte*>(p);
}

void free_buffer(std::byte* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  if (size >= kMappedBufferBytes) free_mapping(p, size);
  else ::operator delete (p, std::align_val_t{kSmallAlignment});
}

}  // namespace dmlbits
