// Run timing (dmlbits/timing.hpp): a phase by name and the execute bandwidth, from phases given
// by hand (no clock is read, so nothing here depends on the machine's speed), and the
// stopwatch's laps, which only ever move forward.
#include <gtest/gtest.h>

#include "dmlbits/timing.hpp"

namespace dmlbits {
namespace {

TEST(RunTimingTest, PhaseByNameOrZero) {
  RunTiming t;
  t.phases = {{"read", 0.25}, {"execute", 0.5}, {"write", 2.0}};
  EXPECT_EQ(t.phase("read"), 0.25);
  EXPECT_EQ(t.phase("write"), 2.0);
  EXPECT_EQ(t.phase("validate"), 0);
  EXPECT_EQ(t.phase("Read"), 0);  // names are exact
}

TEST(RunTimingTest, ThePhaseNamedFirstWins) {
  RunTiming t;
  t.phases = {{"read", 1}, {"read", 3}};
  EXPECT_EQ(t.phase("read"), 1);
}

TEST(RunTimingTest, ExecuteBandwidthCountsEveryMeasuredRun) {
  RunTiming t;
  t.phases = {{"execute", 0.5}};
  t.execute_bytes = 1'000'000'000;
  EXPECT_DOUBLE_EQ(t.execute_gbps(), 2.0);  // 10^9 bytes in half a second
  t.execute_runs = 4;
  EXPECT_DOUBLE_EQ(t.execute_gbps(), 8.0);  // four runs in the same half second
}

TEST(RunTimingTest, NoExecuteTimeIsNoBandwidth) {
  RunTiming t;
  t.execute_bytes = 100;
  EXPECT_EQ(t.execute_gbps(), 0);
  t.phases = {{"execute", 0}};
  EXPECT_EQ(t.execute_gbps(), 0);
}

TEST(StopwatchTest, ALapRestartsTheWatch) {
  Stopwatch lapped;
  Stopwatch witness;  // started after `lapped`, before its lap
  const double lap = lapped.lap();
  EXPECT_GE(lap, 0);
  // After the lap, `lapped` counts from the lap: less than `witness`, which was not restarted.
  const double since_lap = lapped.seconds();
  const double since_start = witness.seconds();
  EXPECT_LE(since_lap, since_start);
}

}  // namespace
}  // namespace dmlbits
