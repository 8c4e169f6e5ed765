// The operating system's part of allocate_buffer (memory.cpp): a buffer of kMappedBufferBytes or
// more gets a mapping of its own (memory_posix.cpp: mmap, 2 MiB-aligned with huge pages
// requested; memory_win32.cpp: VirtualAlloc), so that its pages go back to the system when it
// is freed.
#pragma once

#include <cstddef>

#include "memory.hpp"

namespace dmlbits {

// `size` bytes (>= kMappedBufferBytes), made resident first when `fault` says so; nullptr when
// the system has no memory for it (or no mapping that large can exist).
std::byte* allocate_mapping(std::size_t size, Prefault fault) noexcept;
// Frees allocate_mapping(size, ...)'s result.
void free_mapping(std::byte* p, std::size_t size) noexcept;

}  // namespace dmlbits
