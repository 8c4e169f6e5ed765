#include "mapped_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <limits>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define DMLBITS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DMLBITS_ASAN 1
#endif
#endif
#ifdef DMLBITS_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace dmlbits {
namespace {

constexpr std::size_t kHugePage = kLargeBufferBytes;

std::size_t page_size() {
  static const std::size_t size = [] {
    const long s = ::sysconf(_SC_PAGESIZE);
    return s > 0 ? static_cast<std::size_t>(s) : std::size_t{4096};
  }();
  return size;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Makes [p, p + length) resident for writing.
bool prefault(std::byte* p, std::size_t length) {
#ifdef MADV_POPULATE_WRITE
  if (::madvise(p, length, MADV_POPULATE_WRITE) == 0) return true;
  if (errno != EINVAL) return false;  // ENOMEM: the memory is not there; EINVAL: a kernel before 5.14
#endif
  // One write per page does the same, a page fault at a time.
  for (std::size_t off = 0; off < length; off += page_size()) static_cast<volatile std::byte*>(p)[off] = std::byte{0};
  return true;
}

// The Linux calls. A mapping of its own, so that its pages go back to the system when it is
// freed (the heap would keep them), starting on a 2 MiB boundary and spanning whole 2 MiB
// ranges: only whole, aligned 2 MiB ranges can be huge pages, and a buffer smaller than one, or
// the last part of a larger one, would otherwise take its memory in 4 KiB pages, faulting one
// at a time. Only the pages up to `size` are made resident (Prefault::yes): with huge pages
// that is the whole last range, without them it is no more than the buffer needs.
}  // namespace

std::byte* allocate_mapping(std::size_t size, Prefault fault) noexcept {
  // No mapping that large can exist, and rounding it up (or adding the alignment slack) would
  // wrap around to a small length.
  if (size > std::numeric_limits<std::size_t>::max() - 2 * kHugePage) return nullptr;
  const std::size_t length = round_up(size, kHugePage);
  void* raw = ::mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto* base = static_cast<std::byte*>(raw);
  const std::size_t head = (kHugePage - reinterpret_cast<std::uintptr_t>(raw) % kHugePage) % kHugePage;
  if (head != 0) ::munmap(base, head);
  ::munmap(base + head + length, kHugePage - head);
  std::byte* p = base + head;
  // Only a request: with transparent huge pages disabled the buffer has small pages.
  ::madvise(p, length, MADV_HUGEPAGE);
  if (fault == Prefault::yes && !prefault(p, round_up(size, page_size()))) {
    ::munmap(p, length);
    return nullptr;
  }
#ifdef DMLBITS_ASAN
  // The heap's buffers end where their size does for AddressSanitizer; so does this one.
  ASAN_POISON_MEMORY_REGION(p + size, length - size);
#endif
  return p;
}

void free_mapping(std::byte* p, std::size_t size) noexcept {
  const std::size_t length = round_up(size, kHugePage);
#ifdef DMLBITS_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, length);
#endif
  ::munmap(p, length);
}

void advise_mapped_buffer(void* p, std::size_t size) noexcept {
  // The whole pages inside [p, p + size): madvise takes page-aligned ranges.
  const std::uintptr_t begin = round_up(reinterpret_cast<std::uintptr_t>(p), page_size());
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + size) / page_size() * page_size();
  if (size < kLargeBufferBytes || end <= begin) return;
  auto* start = reinterpret_cast<std::byte*>(begin);
  ::madvise(start, end - begin, MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
  ::madvise(start, end - begin, MADV_POPULATE_WRITE);  // no fallback: a mapping that refuses keeps its faults
#endif
}

}  // namespace dmlbits
