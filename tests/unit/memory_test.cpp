// Buffers (memory.hpp): every buffer aligned to 64 bytes and one of kMappedBufferBytes
// or more (mapped on its own) to 2 MiB, usable over its whole size, never nullptr (size 0 included), and an impossible
// size refused with Errc::io rather than returned.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "dmlbits/error.hpp"
#include "memory.hpp"

namespace dmlbits {
namespace {

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(MemoryTest, SmallBuffersAreAlignedAndDistinct) {
  std::byte* zero_a = allocate_buffer(0);
  std::byte* zero_b = allocate_buffer(0);
  ASSERT_NE(zero_a, nullptr);
  ASSERT_NE(zero_b, nullptr);
  EXPECT_NE(zero_a, zero_b);
  EXPECT_EQ(address(zero_a) % 64, 0u);
  for (const std::size_t size : {std::size_t{1}, std::size_t{63}, std::size_t{65}, kMappedBufferBytes - 1}) {
    std::byte* p = allocate_buffer(size);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(address(p) % 64, 0u) << size;
    std::memset(p, 0xab, size);  // the whole size is usable (AddressSanitizer checks the bound)
    EXPECT_EQ(p[size - 1], std::byte{0xab});
    free_buffer(p, size);
  }
  free_buffer(zero_a, 0);
  free_buffer(zero_b, 0);
  free_buffer(nullptr, 100);  // a no-op, like free(nullptr)
}

TEST(MemoryTest, LargeBuffersStartOnA2MiBBoundary) {
  // Exactly the threshold, one byte more, less than and exactly one 2 MiB range, a partial last
  // 2 MiB range; each prefaulted and not.
  for (const std::size_t size : {kMappedBufferBytes, kMappedBufferBytes + 1, kLargeBufferBytes - 4095,
                                 kLargeBufferBytes, kLargeBufferBytes * 3 + 4097}) {
    for (const Prefault fault : {Prefault::no, Prefault::yes}) {
      std::byte* p = allocate_buffer(size, fault);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(address(p) % kLargeBufferBytes, 0u) << size;
      p[0] = std::byte{1};
      p[size / 2] = std::byte{2};
      p[size - 1] = std::byte{3};
      EXPECT_EQ(p[0], std::byte{1});
      EXPECT_EQ(p[size - 1], std::byte{3});
      free_buffer(p, size);
    }
  }
}

// A size no machine has: the mapping fails and the caller gets an error, not a pointer.
TEST(MemoryTest, AnImpossibleSizeIsAnIoError) {
  const std::size_t size = std::numeric_limits<std::size_t>::max() / 2;
  try {
    std::byte* p = allocate_buffer(size);
    free_buffer(p, size);
    ADD_FAILURE() << "allocated " << size << " bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(std::string(e.what()), "out of memory allocating 9223372036854775807 bytes");
  }
}

// Whether allocate_buffer(size), in a child process, throws Errc::io: exit status 0 if so.
// A child, because a wrapped length handed to munmap could unmap memory the process uses.
void expect_refused_in_child(std::size_t size) {
  EXPECT_EXIT(
      {
        int status = 1;
        try {
          (void)allocate_buffer(size);
        } catch (const Error& e) {
          status = e.code() == Errc::io ? 0 : 2;
        }
        std::fprintf(stderr, "%s\n", status == 0 ? "refused" : "returned a buffer");
        std::fflush(stderr);
        std::_Exit(status);
      },
      ::testing::ExitedWithCode(0), "refused")
      << "size " << size;
}

// 2 MiB short of SIZE_MAX: the length with the 2 MiB alignment slack comes to exactly 2^64.
TEST(MemoryDeathTest, ASizeWhoseAlignmentSlackWrapsIsAnIoError) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  expect_refused_in_child(std::numeric_limits<std::size_t>::max() - kLargeBufferBytes);
}

// Within a page of SIZE_MAX, rounding the size up to pages wraps (to 0 for SIZE_MAX), and so
// does adding the 2 MiB alignment slack (for SIZE_MAX - 4096): such sizes are refused before
// mmap, which would otherwise succeed with a small length. (Tensor never asks: Shape's byte_size
// stops at PTRDIFF_MAX; any other caller of allocate_buffer could.)
TEST(MemoryDeathTest, SizesWhosePageRoundingWrapsAreIoErrors) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  expect_refused_in_child(std::numeric_limits<std::size_t>::max());
  expect_refused_in_child(std::numeric_limits<std::size_t>::max() - 4096);
}

TEST(MemoryTest, AdviceKeepsTheContents) {
  const std::size_t size = kLargeBufferBytes * 2;
  std::byte* p = allocate_buffer(size);
  for (std::size_t i = 0; i < size; i += 4096) p[i] = static_cast<std::byte>(i / 4096);
  // Unaligned bounds: only the whole pages inside are advised; small ranges are left alone.
  advise_mapped_buffer(p + 1, size - 1);
  advise_mapped_buffer(p, 100);
  for (std::size_t i = 0; i < size; i += 4096) ASSERT_EQ(p[i], static_cast<std::byte>(i / 4096)) << i;
  free_buffer(p, size);
}

}  // namespace
}  // namespace dmlbits
