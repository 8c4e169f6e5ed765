// The Win32 implementation of dmlbits/memory.hpp. Large buffers are VirtualAlloc'd on their
// own, so that their pages go back to the system when freed; Windows gives large pages only
// to processes holding SeLockMemoryPrivilege, so there is no huge-page request here.
#include "dmlbits/memory.hpp"

#include <cstdint>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "win32.hpp"

namespace dmlbits {
namespace {

constexpr std::size_t kSmallAlignment = 64;  // kTensorAlignment, without including tensor.hpp
constexpr std::size_t kPage = 4096;

std::byte* allocate_large(std::size_t size, Prefault fault) {
  if (size > std::numeric_limits<std::size_t>::max() - kPage) return nullptr;
  // Committed memory is charged to the commit limit here, so a machine without it fails now.
  void* raw = ::VirtualAlloc(nullptr, size, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE);
  if (raw == nullptr) return nullptr;
  auto* p = static_cast<std::byte*>(raw);
  if (fault == Prefault::yes) {
    // One write per page makes it resident, as MADV_POPULATE_WRITE does on Linux.
    for (std::size_t off = 0; off < size; off += kPage) static_cast<volatile std::byte*>(p)[off] = std::byte{0};
  }
  return p;
}

}  // namespace

std::byte* allocate_buffer(std::size_t size, Prefault fault) {
  void* p = nullptr;
  if (size >= kLargeBufferBytes) {
    p = allocate_large(size, fault);
  } else {
    // Round up so that size 0 still yields a valid, unique, aligned pointer.
    const std::size_t alloc = size == 0 ? kSmallAlignment : (size + kSmallAlignment - 1) / kSmallAlignment * kSmallAlignment;
    p = ::operator new(alloc, std::align_val_t{kSmallAlignment}, std::nothrow);
  }
  if (p == nullptr) throw Error(Errc::io, fmt::format("out of memory allocating {} bytes", size));
  return static_cast<std::byte*>(p);
}

void free_buffer(std::byte* p, std::size_t size) noexcept {
  if (p == nullptr) return;
  if (size >= kLargeBufferBytes) ::VirtualFree(p, 0, MEM_RELEASE);
  else ::operator delete(p, std::align_val_t{kSmallAlignment});
}

// Nothing to ask for: no huge pages (see above), and Windows has no "populate" for memory
// another library mapped.
void advise_mapped_buffer(void*, std::size_t) noexcept {}

}  // namespace dmlbits
