// How many threads a run computes on: the rule from a described machine (pure, so that tests can
// describe any), the machine this process runs on, and the process-wide budget that runs on
// several calling threads share. It is the machine's, below the backends: the CPU backend computes
// on these threads and the D3D12 backend copies on them (copy_team.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cpu_isa.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits {

// A machine as the thread rule sees it.
struct CpuMachine {
  unsigned cpus = 1;            // CPUs this process may run on (its affinity mask), at least 1
  std::optional<double> quota;  // its cgroup's CPU quota in CPUs (cpu.max quota / period); none: no limit
  Isa isa = Isa::scalar;        // the instruction set the kernels run
};

// Outputs (or inputs, where wider) under this many bytes are computed on one thread: starting a
// thread costs more than it saves (CpuBackendOptions::parallel_min_bytes).
inline constexpr std::uint64_t kParallelMinBytes = std::uint64_t{4} << 20;

// The threads from which more stop paying for this instruction set's kernels: the element-wise
// operators are bound by memory, and a memory system saturates at some number of cores (the
// figures they rest on: testdata/benchmarks.md, "Issue #39: the library returns data").
unsigned knee_threads(Isa isa);

// The CPUs a machine gives this process: its affinity mask, held to its quota rounded up (a
// quota of 1.5 CPUs lets 2 threads run 75% of the time each: no worse than one thread fewer).
unsigned available_cpus(const CpuMachine& machine);

struct ThreadCount {
  unsigned threads = 1;                       // threads this run computes on
  unsigned team = 1;                          // threads a large run computes on: the backend's count ("2 threads")
  ThreadLimit limit = ThreadLimit::cpus;      // what held `team`
  ThreadLimit run_limit = ThreadLimit::cpus;  // what held `threads` (`limit`, or size)
};

// The rule. `team`: `requested` if not 0, else the CPUs of the machine (its affinity mask, its
// quota rounded up), at most knee_threads(isa). `threads`: 1 for `work_bytes` (the wider of a
// run's output and input bytes) under `parallel_min_bytes`, else at most one per half of it
// (2 MiB: a thread's share must outweigh starting it), at most `team`.
ThreadCount cpu_thread_rule(const CpuMachine& machine, std::uint64_t work_bytes, unsigned requested = 0,
                            std::uint64_t parallel_min_bytes = kParallelMinBytes);

// The machine this process runs on: affinity_cpu_count(), cgroup_cpu_quota(), host_isa(). Read
// once, at first use (the cgroup files cost tens of microseconds; a call of 4x4 elements
// checks its thread count).
const CpuMachine& this_machine();

// The thread count for a request of `requested` (the threads option, or DMLBITS_THREADS as
// prepare_request resolved it): itself, or for 0 the machine's: cpu_thread_rule(this_machine(),
// ...).team for `isa`'s kernels (the host's widest set by default). Reads no environment.
unsigned cpu_threads(unsigned requested, std::optional<Isa> isa = std::nullopt);
// Whether cpu_threads(requested) is the machine's default: `requested` names no count. Runs on the default share the
// process's ThreadLease budget.
bool cpu_threads_are_default(unsigned requested);
// The most threads the CPU backend computes on (--threads, DMLBITS_THREADS).
inline constexpr unsigned kMaxCpuThreads = 256;
// A thread count as text (--threads, DMLBITS_THREADS): decimal digits only, 1 to
// kMaxCpuThreads; nullopt for anything else. The one reader of that text (request.hpp's
// parse_threads_option refuses for the faces, prepare_request for the variable).
std::optional<unsigned> parse_thread_count(std::string_view text);

// The team and why it is what it is, as data for `devices` and -v (thread_team_reason words it:
// "2 CPUs this process may run on", "as asked").
ThreadTeam thread_team_of(const CpuMachine& machine, const ThreadCount& count);

// The budget of worker threads in this process: runs on the default thread count (none was
// asked) take their threads from it, so that calls from several threads at once (Python
// threads, Dask tasks in one worker, check --jobs) share the machine's team instead of each
// starting a full one. A lease takes what is free of `wanted`, and at least one: the calling
// thread, which runs anyway. Held for one run; given back when destroyed.
class ThreadLease {
 public:
  explicit ThreadLease(unsigned wanted);
  ~ThreadLease();
  ThreadLease(const ThreadLease&) = delete;
  ThreadLease& operator=(const ThreadLease&) = delete;
  unsigned threads() const { return threads_; }

 private:
  unsigned threads_;
};

// Threads leased now, in this process (for tests).
unsigned leased_threads();

// Runs elements [0, n) in `parts` parts split on 64-element boundaries (so that no cache line of
// an output is written by two threads): part(k, begin, end) for each non-empty part k, part 0 on
// the calling thread, the others each on a thread of its own (one that cannot be started runs
// on the calling thread instead); returns when all have. `parts` 0 counts as 1. The threads'
// count is the caller's (a ThreadLease's, or one asked for).
void run_in_parts(std::uint64_t n, unsigned parts,
                  const std::function<void(unsigned part, std::uint64_t begin, std::uint64_t end)>& part);

}  // namespace dmlbits
