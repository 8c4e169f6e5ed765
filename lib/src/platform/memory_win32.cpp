// The Win32 implementation of memory.hpp. Large buffers are VirtualAlloc'd on their
// own, so that their pages go back to the system when freed; Windows gives large pages only
// to processes holding SeLockMemoryPrivilege, so there is no huge-page request here.
#include "mapped_memory.hpp"

#include <cstdint>
#include <limits>
#include <new>

#include "win32.hpp"

namespace dmlbits {
namespace {

constexpr std::size_t kPage = 4096;

}  // namespace

std::byte* allocate_mapping(std::size_t size, Prefault fault) noexcept {
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

void free_mapping(std::byte* p, std::size_t) noexcept { ::VirtualFree(p, 0, MEM_RELEASE); }

// Nothing to ask for: no huge pages (see above), and Windows has no "populate" for memory
// another library mapped.
void advise_mapped_buffer(void*, std::size_t) noexcept {}

}  // namespace dmlbits
