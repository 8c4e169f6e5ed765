// DirectML feature levels (dmlbits/ops.hpp): DirectML's encoding (DML_FEATURE_LEVEL_x_y
// = 0xXY00), the order of the levels, their names, and what parse_feature_level accepts.
#include <gtest/gtest.h>

#include <string>

#include "dmlbits/ops.hpp"

namespace dmlbits {
namespace {

TEST(FeatureLevelTest, EncodesAsDirectMlDoes) {
  // DML_FEATURE_LEVEL_1_0 = 0x1000, DML_FEATURE_LEVEL_4_1 = 0x4100, DML_FEATURE_LEVEL_6_4 = 0x6400.
  EXPECT_EQ(FeatureLevel(1, 0).value(), 0x1000);
  EXPECT_EQ(FeatureLevel(4, 1).value(), 0x4100);
  EXPECT_EQ(FeatureLevel(6, 4).value(), 0x6400);
  EXPECT_EQ(FeatureLevel(5, 2).major(), 5);
  EXPECT_EQ(FeatureLevel(5, 2).minor(), 2);
  EXPECT_EQ(FeatureLevel().value(), 0);
}

TEST(FeatureLevelTest, NamesAndOrder) {
  EXPECT_EQ(FeatureLevel(4, 1).short_name(), "4_1");
  EXPECT_EQ(FeatureLevel(4, 1).enum_name(), "DML_FEATURE_LEVEL_4_1");
  EXPECT_LT(FeatureLevel(3, 1), FeatureLevel(4, 0));
  EXPECT_LT(FeatureLevel(4, 0), FeatureLevel(4, 1));
  EXPECT_EQ(FeatureLevel(2, 1), FeatureLevel(2, 1));
}

TEST(FeatureLevelTest, TheFifteenLevelsDirectMlDefinesOldestFirst) {
  const std::vector<std::string> expected{"1_0", "2_0", "2_1", "3_0", "3_1", "4_0", "4_1", "5_0",
                                          "5_1", "5_2", "6_0", "6_1", "6_2", "6_3", "6_4"};
  std::vector<std::string> names;
  for (const auto& l : feature_levels()) names.push_back(l.short_name());
  EXPECT_EQ(names, expected);
  EXPECT_EQ(newest_feature_level(), FeatureLevel(6, 4));
}

TEST(ParseFeatureLevelTest, AcceptsTheThreeSpellings) {
  EXPECT_EQ(parse_feature_level("4.1"), FeatureLevel(4, 1));
  EXPECT_EQ(parse_feature_level("4_1"), FeatureLevel(4, 1));
  EXPECT_EQ(parse_feature_level("DML_FEATURE_LEVEL_4_1"), FeatureLevel(4, 1));
  EXPECT_EQ(parse_feature_level("1_0"), FeatureLevel(1, 0));
  EXPECT_EQ(parse_feature_level("6.4"), FeatureLevel(6, 4));
}

TEST(ParseFeatureLevelTest, RefusesEverythingElse) {
  for (const char* text :
       {"", "4", "41", "4_2", "7_0", "0_0", "1_1", "4-1", "4__1", "4_10", " 4_1", "4_1 ", "DML_FEATURE_LEVEL_4.1",
        "DML_FEATURE_LEVEL_", "dml_feature_level_4_1", "a_1", "4_b", "DML_FEATURE_LEVEL_4_2"})
    EXPECT_EQ(parse_feature_level(text), std::nullopt) << '"' << text << '"';
}

TEST(ParseFeatureLevelTest, EveryLevelReadsBackFromItsNames) {
  for (const auto& l : feature_levels()) {
    EXPECT_EQ(parse_feature_level(l.short_name()), l);
    EXPECT_EQ(parse_feature_level(l.enum_name()), l);
  }
}

}  // namespace
}  // namespace dmlbits
