// Memory for buffers that may be large: tensor storage (AlignedBuffer), whole inputs
// (InputBytes), scratch for converting .npy data, and device buffers mapped into the process.
// The operating-system calls behind them are in memory_posix.cpp and memory_win32.cpp (one per
// system, in the platform layer); memory.cpp holds what both share.
#pragma once

#include <cstddef>

namespace dmlbits {

// Mapped buffers are aligned to this (2 MiB, a huge page) and span whole multiples of it, with
// transparent huge pages requested (madvise(MADV_HUGEPAGE), as NumPy does for large arrays). The
// first use of a fresh 4 KiB page is slow on virtual machines, where a 2 MiB page costs far less
// per byte (testdata/benchmarks.md, "Fresh pages").
inline constexpr std::size_t kLargeBufferBytes = std::size_t{2} << 20;
// Buffers from this size up are mapped on their own (in whole kLargeBufferBytes ranges: at most
// 2 MiB more than asked). Below it they come from the heap, whose pages are mostly reused; from
// it up malloc would map them afresh in 4 KiB pages, each faulting on first use, which made
// 128 KiB-2 MiB operands cost several times more per byte than larger ones (testdata/
// benchmarks.md, "Size sweep"). It is glibc's default mmap threshold.
inline constexpr std::size_t kMappedBufferBytes = std::size_t{128} << 10;

enum class Prefault {
  no,   // pages arrive as they are first written (a buffer that may stay mostly unused)
  yes,  // a large buffer's pages are made resident before it is returned: its first writer
        // (a timed execution) then does not pay the page faults, and a machine without the
        // memory fails here, with an error, rather than at a page fault somewhere later
};

// `size` uninitialised bytes aligned to at least 64, never nullptr (also for size 0). Throws
// Errc::io ("out of memory allocating N bytes").
std::byte* allocate_buffer(std::size_t size, Prefault prefault = Prefault::no);
// Returns a buffer from allocate_buffer; `size` must be the one it was allocated with.
void free_buffer(std::byte* p, std::size_t size) noexcept;

// Asks for huge pages and resident pages on memory that another library mapped (a D3D12 upload
// or readback heap); only a hint, ignored where the mapping does not allow it.
void advise_mapped_buffer(void* p, std::size_t size) noexcept;

}  // namespace dmlbits
