#include "dmlbits/error.hpp"

#include <gtest/gtest.h>

namespace dmlbits {
namespace {

TEST(ByteSizeTest, WholeUnitsAndBytes) {
  EXPECT_EQ(format_byte_size(0), "0 bytes");
  EXPECT_EQ(format_byte_size(1), "1 byte");
  EXPECT_EQ(format_byte_size(1023), "1023 bytes");
  EXPECT_EQ(format_byte_size(1024), "1 KiB");
  EXPECT_EQ(format_byte_size(std::uint64_t{64} << 20), "64 MiB");
  EXPECT_EQ(format_byte_size(std::uint64_t{10} << 30), "10 GiB");
  EXPECT_EQ(format_byte_size(std::uint64_t{1} << 40), "1 TiB");
  EXPECT_EQ(format_byte_size(std::uint64_t{1} << 63), "8 EiB");
}

TEST(ByteSizeTest, FractionsCarryTheExactCountUnlessAskedNotTo) {
  EXPECT_EQ(format_byte_size(1536), "1.5 KiB (1536 bytes)");
  EXPECT_EQ(format_byte_size((std::uint64_t{64} << 20) + 1), "64.0 MiB (67108865 bytes)");
  EXPECT_EQ(format_byte_size(8375238656, false), "7.8 GiB");
  EXPECT_EQ(format_byte_size(1536, false), "1.5 KiB");
  EXPECT_EQ(format_byte_size(~std::uint64_t{0}, false), "16.0 EiB");
  EXPECT_EQ(format_byte_size(1023, false), "1023 bytes");
}

}  // namespace
}  // namespace dmlbits
