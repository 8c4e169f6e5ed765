// The CPU backend's thread count (thread_rule.hpp): the rule over described machines (CPU sets,
// cgroup quotas, sizes, instruction sets), the cgroup readers over described cgroup trees
// (cpu_set.hpp), and the process-wide budget that calls from several threads share. The
// expected counts are worked out by hand from the rule as the man page states it (--threads).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cpu_set.hpp"
#include "thread_rule.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kLarge = std::numeric_limits<std::uint64_t>::max();

CpuMachine machine(unsigned cpus, std::optional<double> quota = std::nullopt, Isa isa = Isa::avx2) {
  return CpuMachine{cpus, quota, isa};
}

TEST(ThreadRuleTest, TheTeamIsTheCpusThisProcessMayRunOn) {
  // An affinity mask of 1, 2, 3 CPUs (taskset -c 0, -c 0,1, -c 0-2) and no quota.
  EXPECT_EQ(cpu_thread_rule(machine(1), kLarge).team, 1u);
  EXPECT_EQ(cpu_thread_rule(machine(1), kLarge).limit, ThreadLimit::cpus);
  EXPECT_EQ(cpu_thread_rule(machine(2), kLarge).team, 2u);
  EXPECT_EQ(cpu_thread_rule(machine(3), kLarge).team, 3u);
  // 0 (a machine described without CPUs) is taken as one.
  EXPECT_EQ(cpu_thread_rule(machine(0), kLarge).team, 1u);
}

TEST(ThreadRuleTest, AQuotaRoundedUpHoldsTheTeam) {
  // docker --cpus 1.5 on 16 CPUs: cpu.max "150000 100000" -> 2 threads.
  EXPECT_EQ(cpu_thread_rule(machine(16, 1.5), kLarge).team, 2u);
  EXPECT_EQ(cpu_thread_rule(machine(16, 1.5), kLarge).limit, ThreadLimit::quota);
  EXPECT_EQ(cpu_thread_rule(machine(16, 0.5), kLarge).team, 1u);  // under one CPU: still one
  EXPECT_EQ(cpu_thread_rule(machine(16, 3.0), kLarge).team, 3u);  // whole CPUs are not rounded up
  EXPECT_EQ(cpu_thread_rule(machine(16, 4.01), kLarge).team, 5u);
  // A quota above the mask leaves the mask's count.
  EXPECT_EQ(cpu_thread_rule(machine(2, 8.0), kLarge).team, 2u);
  EXPECT_EQ(cpu_thread_rule(machine(2, 8.0), kLarge).limit, ThreadLimit::cpus);
  EXPECT_EQ(available_cpus(machine(16, 1.5)), 2u);
  EXPECT_EQ(available_cpus(machine(3)), 3u);
}

TEST(ThreadRuleTest, TheKneeCapsTheTeamPerInstructionSet) {
  // 8 for the vector kernels, 16 for the scalar ones (memory-bound: more cores stop paying).
  EXPECT_EQ(knee_threads(Isa::avx2), 8u);
  EXPECT_EQ(knee_threads(Isa::avx512), 8u);
  EXPECT_EQ(knee_threads(Isa::scalar), 16u);
  // --threads' help says one figure for the SIMD kernels (thread_defaults()): every SIMD set's.
  for (std::size_t i = 0; i < kIsaCount; ++i)
    if (static_cast<Isa>(i) != Isa::scalar) {
      EXPECT_EQ(knee_threads(static_cast<Isa>(i)), thread_defaults().most) << i;
    }
  EXPECT_EQ(thread_defaults().most_scalar, knee_threads(Isa::scalar));
  EXPECT_EQ(thread_defaults().parallel_min_bytes, kParallelMinBytes);
  EXPECT_EQ(cpu_thread_rule(machine(128, std::nullopt, Isa::avx512), kLarge).team, 8u);
  EXPECT_EQ(cpu_thread_rule(machine(128, std::nullopt, Isa::avx512), kLarge).limit, ThreadLimit::knee);
  EXPECT_EQ(cpu_thread_rule(machine(128, std::nullopt, Isa::scalar), kLarge).team, 16u);
  EXPECT_EQ(cpu_thread_rule(machine(8, std::nullopt, Isa::avx2), kLarge).team, 8u);
  EXPECT_EQ(cpu_thread_rule(machine(8, std::nullopt, Isa::avx2), kLarge).limit, ThreadLimit::cpus);
  // A quota of 6 on 64 CPUs: the quota, under the knee.
  EXPECT_EQ(cpu_thread_rule(machine(64, 6.0), kLarge).team, 6u);
}

TEST(ThreadRuleTest, SmallOutputsRunOnOneAndLargerOnOnePer2MiB) {
  const CpuMachine m = machine(16, std::nullopt, Isa::avx512);  // a team of 8
  EXPECT_EQ(cpu_thread_rule(m, 0).threads, 1u);
  EXPECT_EQ(cpu_thread_rule(m, 4 * kMiB - 1).threads, 1u);
  EXPECT_EQ(cpu_thread_rule(m, 4 * kMiB - 1).run_limit, ThreadLimit::size);
  EXPECT_EQ(cpu_thread_rule(m, 4 * kMiB).threads, 2u);  // as before: 2 threads from 4 MiB
  EXPECT_EQ(cpu_thread_rule(m, 6 * kMiB).threads, 3u);
  EXPECT_EQ(cpu_thread_rule(m, 8 * kMiB - 1).threads, 3u);
  EXPECT_EQ(cpu_thread_rule(m, 16 * kMiB).threads, 8u);
  EXPECT_EQ(cpu_thread_rule(m, 16 * kMiB).run_limit, ThreadLimit::knee);
  EXPECT_EQ(cpu_thread_rule(m, 256 * kMiB).threads, 8u);
  EXPECT_EQ(cpu_thread_rule(m, 6 * kMiB).team, 8u);  // the team does not depend on the size
  // On two CPUs: one under 4 MiB, two from there (today's rule on this project's hosts).
  EXPECT_EQ(cpu_thread_rule(machine(2), 4 * kMiB - 1).threads, 1u);
  EXPECT_EQ(cpu_thread_rule(machine(2), 4 * kMiB).threads, 2u);
  EXPECT_EQ(cpu_thread_rule(machine(2), 1024 * kMiB).threads, 2u);
  // A lowered threshold (tests): 0 or 1 byte splits anything over every thread.
  EXPECT_EQ(cpu_thread_rule(m, 1, 0, 1).threads, 8u);
  EXPECT_EQ(cpu_thread_rule(m, 0, 3, 0).threads, 3u);
}

TEST(ThreadRuleTest, ARequestedCountIsTheTeamWhateverTheMachine) {
  EXPECT_EQ(cpu_thread_rule(machine(1), kLarge, 7).team, 7u);
  EXPECT_EQ(cpu_thread_rule(machine(1), kLarge, 7).limit, ThreadLimit::requested);
  EXPECT_EQ(cpu_thread_rule(machine(128), kLarge, 64).team, 64u);  // past the knee, as asked
  EXPECT_EQ(cpu_thread_rule(machine(16, 1.5), kLarge, 4).team, 4u);
  // The size still holds a small run to fewer.
  EXPECT_EQ(cpu_thread_rule(machine(1), 4 * kMiB, 7).threads, 2u);
  EXPECT_EQ(cpu_thread_rule(machine(1), kMiB, 7).threads, 1u);
}

TEST(ThreadRuleTest, TheReasonNamesWhatHeldTheTeam) {
  EXPECT_EQ(thread_team_reason(thread_team_of(machine(2), cpu_thread_rule(machine(2), kLarge))),
            "2 CPUs this process may run on");
  EXPECT_EQ(thread_team_reason(thread_team_of(machine(1), cpu_thread_rule(machine(1), kLarge))),
            "1 CPU this process may run on");
  EXPECT_EQ(thread_team_reason(thread_team_of(machine(16, 1.5), cpu_thread_rule(machine(16, 1.5), kLarge))),
            "the cgroup's CPU quota of 1.5 of the 16 CPUs this process may run on");
  const CpuMachine big = machine(64, std::nullopt, Isa::avx512);
  EXPECT_EQ(thread_team_reason(thread_team_of(big, cpu_thread_rule(big, kLarge))),
            "8 of the 64 CPUs this process may run on, where more stop paying for avx512 kernels");
  EXPECT_EQ(thread_team_reason(thread_team_of(big, cpu_thread_rule(big, kLarge, 3))), "as asked");
}

// ---- cgroups: quotas from described trees --------------------------------------------------

TEST(CgroupQuotaTest, ParsesCpuMaxAndCfs) {
  EXPECT_EQ(parse_cgroup2_cpu_max("max 100000\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup2_cpu_max("150000 100000\n"), 1.5);
  EXPECT_EQ(parse_cgroup2_cpu_max("200000 100000"), 2.0);
  EXPECT_EQ(parse_cgroup2_cpu_max("50000 100000\n"), 0.5);
  EXPECT_EQ(parse_cgroup2_cpu_max(""), std::nullopt);
  EXPECT_EQ(parse_cgroup2_cpu_max("garbage"), std::nullopt);
  EXPECT_EQ(parse_cgroup2_cpu_max("0 100000"), std::nullopt);
  EXPECT_EQ(parse_cgroup1_cfs("-1\n", "100000\n"), std::nullopt);
  EXPECT_EQ(parse_cgroup1_cfs("250000\n", "100000\n"), 2.5);
  EXPECT_EQ(parse_cgroup1_cfs("x", "100000"), std::nullopt);
}

TEST(CgroupQuotaTest, V2TakesTheTightestOfTheGroupAndItsAncestors) {
  test::TempDir root("cgroup-v2");
  std::filesystem::create_directories(root.path() / "user.slice" / "job");
  test::write_file(root.file("cgroup.controllers"), "cpu memory\n");
  test::write_file((root.path() / "user.slice" / "cpu.max").string(), "300000 100000\n");
  test::write_file((root.path() / "user.slice" / "job" / "cpu.max").string(), "max 100000\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/user.slice/job\n", root.path()), 3.0);
  test::write_file((root.path() / "user.slice" / "job" / "cpu.max").string(), "150000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/user.slice/job\n", root.path()), 1.5);
  // No limit anywhere.
  test::write_file((root.path() / "user.slice" / "cpu.max").string(), "max 100000\n");
  test::write_file((root.path() / "user.slice" / "job" / "cpu.max").string(), "max 100000\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/user.slice/job\n", root.path()), std::nullopt);
  // A container's namespace: "/" and the limit at the root.
  test::write_file(root.file("cpu.max"), "200000 100000\n");
  EXPECT_EQ(cgroup_cpu_quota("0::/\n", root.path()), 2.0);
  // A group the mount does not show: its ancestors' (here the root's) still count.
  EXPECT_EQ(cgroup_cpu_quota("0::/elsewhere/deeper\n", root.path()), 2.0);
}

TEST(CgroupQuotaTest, V1ReadsTheCpuControllersCfsFiles) {
  test::TempDir root("cgroup-v1");
  const auto dir = root.path() / "cpu,cpuacct" / "docker" / "abc";
  std::filesystem::create_directories(dir);
  test::write_file((dir / "cpu.cfs_quota_us").string(), "150000\n");
  test::write_file((dir / "cpu.cfs_period_us").string(), "100000\n");
  const std::string proc = "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n";
  EXPECT_EQ(cgroup_cpu_quota(proc, root.path()), 1.5);
  test::write_file((dir / "cpu.cfs_quota_us").string(), "-1\n");
  EXPECT_EQ(cgroup_cpu_quota(proc, root.path()), std::nullopt);
  // The controller mounted on its own ("cpu"), as on this project's hosts.
  test::TempDir other("cgroup-v1-cpu");
  std::filesystem::create_directories(other.path() / "cpu");
  test::write_file(other.file("cpu/cpu.cfs_quota_us"), "400000\n");
  test::write_file(other.file("cpu/cpu.cfs_period_us"), "100000\n");
  EXPECT_EQ(cgroup_cpu_quota("2:cpuacct:/\n1:cpu:/\n0::/\n", other.path()), 4.0);
}

TEST(CgroupQuotaTest, NoCgroupFileSystemIsNoQuota) {
  test::TempDir root("cgroup-none");
  EXPECT_EQ(cgroup_cpu_quota("0::/user.slice\n", root.path()), std::nullopt);
  EXPECT_EQ(cgroup_cpu_quota("", root.path()), std::nullopt);
}

TEST(CpuSetTest, ThisProcessMayRunOnSomeCpus) {
  EXPECT_GE(affinity_cpu_count(), 1u);
  EXPECT_EQ(this_machine().cpus, affinity_cpu_count());
}

// ---- the budget -----------------------------------------------------------------------------

TEST(ThreadLeaseTest, CallsAtOnceShareTheMachinesTeam) {
  const unsigned pool = cpu_thread_rule(this_machine(), kLarge).team;
  ASSERT_EQ(leased_threads(), 0u);
  {
    ThreadLease first(pool + 5);
    EXPECT_EQ(first.threads(), pool);  // all of it, no more
    ThreadLease second(4);
    EXPECT_EQ(second.threads(), 1u);  // none left: its own thread only
    EXPECT_EQ(leased_threads(), pool + 1);
  }
  EXPECT_EQ(leased_threads(), 0u);
  {
    ThreadLease one(1);
    ThreadLease rest(pool + 5);
    EXPECT_EQ(rest.threads(), pool > 1 ? pool - 1 : 1u);
  }
  EXPECT_EQ(leased_threads(), 0u);
}

}  // namespace
}  // namespace dmlbits

// run_in_parts covers [0, n) exactly once, in parts that start on 64-element boundaries, each
// part by its own index, part 0 (when not empty) on the calling thread; empty parts are not run.
TEST(RunInPartsTest, EveryElementOnceOnSixtyFourElementBoundaries) {
  for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{63}, std::uint64_t{64},
                                std::uint64_t{200}, std::uint64_t{100003}}) {
    for (const unsigned parts : {0u, 1u, 2u, 3u, 7u}) {
      SCOPED_TRACE(testing::Message() << "n=" << n << " parts=" << parts);
      std::vector<std::atomic<int>> seen(n);
      std::vector<std::atomic<int>> part_runs(std::max(1u, parts));
      std::atomic<bool> first_here{false};
      const auto caller = std::this_thread::get_id();
      dmlbits::run_in_parts(n, parts, [&](unsigned k, std::uint64_t begin, std::uint64_t end) {
        EXPECT_LT(begin, end);
        EXPECT_EQ(begin % 64, 0u);
        if (k == 0) first_here = std::this_thread::get_id() == caller;
        ++part_runs[k];
        for (std::uint64_t i = begin; i < end; ++i) ++seen[i];
      });
      for (std::uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(seen[i], 1) << "element " << i;
      }
      for (const auto& r : part_runs) {
        EXPECT_LE(r, 1);
      }
      if (part_runs[0] == 1) {
        EXPECT_TRUE(first_here);
      }
    }
  }
}
