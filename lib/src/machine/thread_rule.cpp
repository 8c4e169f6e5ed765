#include "thread_rule.hpp"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cpu_set.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

std::atomic<unsigned> g_leased{0};

}  // namespace

// The knee: memory-bound kernels saturate a server socket's memory at about 8-16 cores, the
// scalar ones (more work per byte) later; 8 takes the bulk of the gain without crowding out other
// work. The measurements and estimates behind it: testdata/benchmarks.md, "Issue #39: the library
// returns data". scripts/bench-threads measures the knee of any host.
unsigned knee_threads(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return 16;
    case Isa::avx2:
      return 8;
    case Isa::avx512:
      return 8;
  }
  return 8;
}

unsigned available_cpus(const CpuMachine& machine) {
  unsigned n = std::max(1u, machine.cpus);
  if (machine.quota && *machine.quota > 0)
    n = std::min(n, static_cast<unsigned>(std::max(1.0, std::ceil(*machine.quota - 1e-9))));
  return n;
}

ThreadCount cpu_thread_rule(const CpuMachine& machine, std::uint64_t work_bytes, unsigned requested,
                            std::uint64_t parallel_min_bytes) {
  ThreadCount c;
  if (requested != 0) {
    c.team = requested;
    c.limit = ThreadLimit::requested;
  } else {
    c.team = available_cpus(machine);
    c.limit = c.team < std::max(1u, machine.cpus) ? ThreadLimit::quota : ThreadLimit::cpus;
    const unsigned knee = knee_threads(machine.isa);
    if (knee < c.team) {
      c.team = knee;
      c.limit = ThreadLimit::knee;
    }
  }
  c.threads = c.team;
  c.run_limit = c.limit;
  // One thread per half the threshold: 4 MiB of work gets 2 threads as before, 16 MiB at most 8.
  const std::uint64_t per_thread = parallel_min_bytes / 2;
  const std::uint64_t by_size = work_bytes < parallel_min_bytes ? 1
                                : per_thread == 0               ? c.team
                                                                : std::max<std::uint64_t>(1, work_bytes / per_thread);
  if (by_size < c.threads) {
    c.threads = static_cast<unsigned>(by_size);
    c.run_limit = ThreadLimit::size;
  }
  return c;
}

const CpuMachine& this_machine() {
  static const CpuMachine m{affinity_cpu_count(), cgroup_cpu_quota(), host_isa()};
  return m;
}

ThreadTeam thread_team_of(const CpuMachine& machine, const ThreadCount& count) {
  return {.threads = count.team,
          .limit = count.limit,
          .cpus = machine.cpus,
          .quota = machine.quota,
          .isa = std::string(isa_name(machine.isa))};
}

std::optional<unsigned> parse_thread_count(std::string_view text) {
  unsigned n = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, n);
  if (ec != std::errc{} || p != end || n < 1 || n > kMaxCpuThreads) return std::nullopt;
  return n;
}

unsigned cpu_threads(unsigned requested, std::optional<Isa> isa) {
  if (requested != 0) return requested;
  CpuMachine machine = this_machine();
  if (isa) machine.isa = *isa;
  return cpu_thread_rule(machine, UINT64_MAX).team;
}

bool cpu_threads_are_default(unsigned requested) { return requested == 0; }

ThreadLease::ThreadLease(unsigned wanted) {
  const unsigned pool = cpu_thread_rule(this_machine(), UINT64_MAX).team;
  unsigned busy = g_leased.load(std::memory_order_relaxed);
  for (;;) {
    const unsigned free = busy < pool ? pool - busy : 0;
    threads_ = std::max(1u, std::min(wanted, free));
    if (g_leased.compare_exchange_weak(busy, busy + threads_, std::memory_order_acq_rel)) break;
  }
}

ThreadLease::~ThreadLease() { g_leased.fetch_sub(threads_, std::memory_order_acq_rel); }

unsigned leased_threads() { return g_leased.load(); }

void run_in_parts(std::uint64_t n, unsigned parts,
                  const std::function<void(unsigned part, std::uint64_t begin, std::uint64_t end)>& part) {
  parts = std::max(1u, parts);
  std::vector<std::uint64_t> bounds{0};
  for (unsigned t = 1; t < parts; ++t) bounds.push_back(std::max(bounds.back(), n / parts * t / 64 * 64));
  bounds.push_back(n);
  std::vector<std::thread> workers;
  for (unsigned t = 1; t < parts; ++t) {
    if (bounds[t] == bounds[t + 1]) continue;
    try {
      workers.emplace_back(part, t, bounds[t], bounds[t + 1]);
    } catch (const std::system_error&) {
      part(t, bounds[t], bounds[t + 1]);  // no thread to be had: do its share here
    }
  }
  if (bounds[0] < bounds[1]) part(0, bounds[0], bounds[1]);
  for (auto& w : workers) w.join();
}

}  // namespace dmlbits
