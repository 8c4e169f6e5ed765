// The CPUs this process may run on: its affinity mask (taskset, cpusets, a container's cpuset)
// and its control group's CPU quota (docker --cpus, Kubernetes limits), which caps the CPU time
// it gets however many CPUs it may be scheduled on. The cpu layer's thread rule reads them
// (thread_rule.hpp); the parsers are separate so that tests can describe any cgroup.
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

namespace dmlbits {

// CPUs in the calling thread's affinity mask (sched_getaffinity; the process's on Windows), at
// least 1. Read afresh at each call.
unsigned affinity_cpu_count() noexcept;

// A CPU quota as a count of CPUs (quota / period: 1.5 for "150000 100000"), or nullopt for no
// limit or text that is not one.
// cgroup v2's cpu.max: "max 100000" (no limit) or "<quota> <period>".
std::optional<double> parse_cgroup2_cpu_max(std::string_view text);
// cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us ("-1": no limit).
std::optional<double> parse_cgroup1_cfs(std::string_view quota_us, std::string_view period_us);

// The tightest CPU quota of this process's control group and its ancestors, in CPUs, or nullopt
// where none is set (or none can be read: no cgroup file system, Windows). `proc_self_cgroup` is
// the text of /proc/self/cgroup ("0::/user.slice/..." for v2, "4:cpu,cpuacct:/docker/..." for
// v1) and `root` the mount point of the hierarchies (/sys/fs/cgroup: v2's unified tree, or v1's
// cpu,cpuacct or cpu controller beneath it). In a container with its own cgroup namespace the
// path is "/" and the container's limit is at the root.
std::optional<double> cgroup_cpu_quota(std::string_view proc_self_cgroup, const std::filesystem::path& root);
// cgroup_cpu_quota of this process (/proc/self/cgroup, /sys/fs/cgroup), read afresh.
std::optional<double> cgroup_cpu_quota();

}  // namespace dmlbits
