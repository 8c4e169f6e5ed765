#include <gtest/gtest.h>

#include "dmlbits/error.hpp"

TEST(ErrorTest, ExitStatusesAreDistinct) {
  std::set<int> seen;
  for (const auto& e : dmlbits::errc_table()) EXPECT_TRUE(seen.insert(e.exit_status).second) << e.name;
}
