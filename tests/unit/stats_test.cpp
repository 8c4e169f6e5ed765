// Timing statistics (dmlbits/timing.hpp): percentiles by linear interpolation between closest
// ranks (NumPy's default), the population standard deviation, and the JSON form. Expected
// values are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include <nlohmann/json.hpp>

#include "dmlbits/timing.hpp"
#include "stats_json.hpp"

namespace dmlbits {
namespace {

TEST(StatsTest, NoSamplesGiveZeros) {
  const SampleStats s = compute_stats({});
  EXPECT_EQ(s.count, 0u);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.median, 0);
  EXPECT_EQ(s.mean, 0);
  EXPECT_EQ(s.p90, 0);
  EXPECT_EQ(s.max, 0);
  EXPECT_EQ(s.stddev, 0);
}

TEST(StatsTest, OneSampleIsEveryStatistic) {
  const SampleStats s = compute_stats({2.5});
  EXPECT_EQ(s.count, 1u);
  EXPECT_EQ(s.min, 2.5);
  EXPECT_EQ(s.median, 2.5);
  EXPECT_EQ(s.mean, 2.5);
  EXPECT_EQ(s.p90, 2.5);
  EXPECT_EQ(s.max, 2.5);
  EXPECT_EQ(s.stddev, 0);
}

TEST(StatsTest, UnsortedSamplesAreSortedFirst) {
  // Sorted: 1 2 3 4. Median at rank 1.5: 2.5. p90 at rank 2.7: 3 + 0.7 = 3.7. Mean 2.5;
  // population variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
  const SampleStats s = compute_stats({4, 1, 3, 2});
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.p90, 3.7);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.stddev, std::sqrt(1.25));
}

TEST(StatsTest, OddCountsTakeTheMiddleSample) {
  // Sorted 1 2 4 8 16: median rank 2 is 4; p90 rank 3.6: 8 + 0.6 * 8 = 12.8; mean 31 / 5 = 6.2;
  // variance (27.04 + 17.64 + 4.84 + 3.24 + 96.04) / 5 = 148.8 / 5 = 29.76.
  const SampleStats s = compute_stats({16, 8, 4, 2, 1});
  EXPECT_DOUBLE_EQ(s.median, 4);
  EXPECT_DOUBLE_EQ(s.p90, 12.8);
  EXPECT_DOUBLE_EQ(s.mean, 6.2);
  EXPECT_NEAR(s.stddev, std::sqrt(29.76), 1e-12);
}

TEST(StatsTest, EqualSamplesHaveNoSpread) {
  const SampleStats s = compute_stats({0.125, 0.125, 0.125});
  EXPECT_EQ(s.stddev, 0);
  EXPECT_EQ(s.p90, 0.125);
}

TEST(StatsTest, JsonNamesEveryField) {
  // Samples 1 and 3: median 2, p90 1 + 0.9 * 2 = 2.8, mean 2, stddev 1.
  const nlohmann::json j = to_json(compute_stats({3, 1}));
  ASSERT_EQ(j.size(), 7u);
  EXPECT_EQ(j["count"], 2);
  EXPECT_EQ(j["min"], 1.0);
  EXPECT_EQ(j["median"], 2.0);
  EXPECT_EQ(j["mean"], 2.0);
  EXPECT_DOUBLE_EQ(j["p90"].get<double>(), 2.8);
  EXPECT_EQ(j["max"], 3.0);
  EXPECT_EQ(j["stddev"], 1.0);
}

}  // namespace
}  // namespace dmlbits
