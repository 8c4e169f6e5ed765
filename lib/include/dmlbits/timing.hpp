// What a run reports: the wall-clock timing of its phases (last below), and what it computed on.
//
// What a run computed on, why `--backend auto` chose its backend and why a CPU backend uses the
// threads it does: as data, which the library returns (RunTiming, DeviceList), and the words for
// it, which only the faces and the documents they share call (the command line's -v, --time and
// `devices`; the JSON of --time-json, `devices --json` and Python's timing and devices()). The
// run path never formats a sentence: a run that is not reported pays for no text.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dmlbits {

// ---- Threads -------------------------------------------------------------------------------

// What held a CPU backend's thread count where it is.
enum class ThreadLimit : std::uint8_t {
  requested,  // --threads, threads=, DMLBITS_THREADS
  cpus,       // the affinity mask
  quota,      // the cgroup's CPU quota
  knee,       // more threads stop paying: the memory system is saturated (knee_threads)
  size,       // the output is too small for more (kParallelMinBytes)
};

// A CPU backend's threads ("team") and what held them, with the machine that rule saw.
struct ThreadTeam {
  unsigned threads = 0;  // 0: not a backend that computes on CPU threads
  ThreadLimit limit = ThreadLimit::cpus;
  unsigned cpus = 1;              // CPUs this process may run on
  std::optional<double> quota{};  // its cgroup's CPU quota, in CPUs
  std::string isa{};              // the instruction set whose kernels the knee is for ("avx2")
};

// How a CPU run uses the backend's threads, where a description says so.
enum class ThreadUse : std::uint8_t {
  plain,         // nothing to say
  small_output,  // outputs under `bytes` run on one thread
  per_size,      // one thread per `bytes` of output
  pipeline,      // streamed: one thread reads and computes, one writes
  slices,        // streamed: each of `slices` threads reads, computes and writes its share
  small_stream,  // streamed outputs under `bytes` run on one thread
  two_streams,   // two streamed inputs through a pipe or device run on one thread
  narrower,      // outputs narrower than their input run on one thread
};
struct ThreadWhy {
  ThreadUse use = ThreadUse::plain;
  std::uint64_t bytes = 0;
  unsigned slices = 0;
};

// ---- Devices -------------------------------------------------------------------------------

enum class DeviceKind : std::uint8_t { none, cpu, cpu_reference, d3d12, directml, not_built };

// The device a backend runs on, or a run ran on.
struct DeviceDescription {
  DeviceKind kind = DeviceKind::none;
  // cpu: the instruction set as this CPU has it ("AVX2", "scalar (POPCNT)"), whether some
  // operations run a narrower set's kernels (the per-operation table), the backend's threads,
  // and for a run the threads it used (0: the backend's) and why.
  std::string isa{};
  bool narrower_per_operation = false;
  unsigned threads = 0;
  unsigned used = 0;
  ThreadWhy why{};
  // d3d12: the adapter and the device's levels. directml: the adapter its device is on.
  std::string adapter{};
  unsigned adapter_index = 0;
  bool software = false;
  std::string feature_level{}, shader_model{};
  // directml: DirectML's version and the path it was loaded from.
  std::string version{}, path{};
  std::string not_built{};  // not_built: the backend's message
};

// ---- Auto's choice -------------------------------------------------------------------------

// decide_auto's estimate for one adapter (lib/src/run/auto_rule.hpp).
struct AutoEstimate {
  unsigned adapter_index = 0;
  std::string adapter_name{};
  bool software = false;  // not estimated: a software adapter is never taken
  bool uma = false;
  bool gpu = false;  // d3d12 estimated faster
  double cpu_seconds = 0, gpu_seconds = 0;
  unsigned cpu_threads = 1;
};

enum class SelectionRule : std::uint8_t {
  named,            // the caller named the backend: nothing to say
  small_output,     // the output (output_bytes) is below min_bytes
  d3d12_not_built,  // detail: the d3d12 backend's message
  no_hardware,      // the device nodes show no hardware adapter (detail: what they show)
  no_runtime,       // runtime (vkd3d, d3d12.dll) not found: detail
  no_adapter,       // no D3D12 adapter: detail
  software_only,    // every adapter (adapters) is software
  estimate,         // decide_auto's estimate
  device_failed,    // the D3D12 device failed: detail
};

// Why make_backend(automatic) chose its backend.
struct Selection {
  SelectionRule rule = SelectionRule::named;
  std::string backend{};  // what it chose: "cpu" or "d3d12"
  std::uint64_t output_bytes = 0, min_bytes = 0;
  std::string runtime{};  // no_runtime: its name
  std::string detail{};   // a message from outside (a loader, a device)
  std::vector<std::string> adapters{};
  AutoEstimate estimate{};
};

// ---- The words -----------------------------------------------------------------------------

// "2 CPUs this process may run on", "the cgroup's CPU quota of 1.5 of the 16 CPUs this process
// may run on", "8 of the 64 CPUs this process may run on, where more stop paying for avx512
// kernels", "as asked"; "" for no team.
std::string thread_team_reason(const ThreadTeam& team);
// "2 threads: 2 CPUs this process may run on"; "" for no team.
std::string thread_team_text(const ThreadTeam& team);
// "CPU, AVX2 kernels, 2 threads", "CPU, AVX2 kernels, 1 of 2 threads (outputs under 4 MiB run on
// one)", "NAME, hardware adapter 0, D3D feature level 12_1, shader model 6.0", ...; "" for none.
std::string device_text(const DeviceDescription& device);
// "adapter 0 (NAME) is discrete: estimated 0.412 s on d3d12 (...) against 0.067 s on the CPU
// backend's 2 threads; named as the backend, d3d12 uses it anyway"
std::string auto_estimate_text(const AutoEstimate& estimate);
// "auto chose cpu: the output (1 KiB) is below 16 MiB, ..."; "" for a named backend.
std::string selection_text(const Selection& selection);

// ---- Timing --------------------------------------------------------------------------------

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  double lap() {  // seconds since the start or the previous lap
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - start_).count();
    start_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

struct PhaseTime {
  std::string name;  // "read", "backend", "validate", "allocate", "warmup", "execute", "write"
  double seconds = 0;
};

// The phases are consecutive stretches of the run's wall-clock time, so that they add up to
// total_seconds: "backend" is choosing and creating the backend (for d3d12, loading vkd3d,
// enumerating adapters and creating the device), "warmup" the unmeasured executions and
// "execute" all the measured ones. In a streamed run whose reading and computing overlap
// writing on a second thread, read and execute are the time the writer waited for them.
struct RunTiming {
  std::vector<PhaseTime> phases;
  double total_seconds = 0;
  std::uint64_t execute_bytes = 0;  // bytes one execution read and wrote
  int execute_runs = 1;             // measured executions in the "execute" phase
  std::string backend;              // its name: "cpu", "d3d12"
  DeviceDescription device;         // what the run computed on (device_text words it)
  Selection selection;              // why auto chose the backend (selection_text); named: SelectionRule::named
  ThreadTeam threads;               // CPU backends: their thread count and why (thread_team_text); else 0 threads
  // The backend's own phases (Backend::detail_phases): summed over every run of the backend,
  // warm-up runs and chunks included, plus its device creation. Empty for the CPU backends.
  std::vector<PhaseTime> backend_phases;
  // The same phases over the measured executions only (their `execute_runs`), the warm-ups
  // left out: a first dispatch that compiles a shader is not a kernel's time. In-memory runs.
  std::vector<PhaseTime> measured_backend_phases;

  double phase(const std::string& name) const;
  // execute_bytes / execute seconds, in GB/s (10^9 bytes); 0 if the step took no time.
  double execute_gbps() const;
};

}  // namespace dmlbits

// Summary statistics of timing samples (DxDispatch-style cold/hot runs).
namespace dmlbits {

struct SampleStats {
  std::size_t count = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, max = 0, stddev = 0;  // population stddev
};

// Percentiles by linear interpolation between closest ranks (NumPy's default method).
SampleStats compute_stats(std::vector<double> samples);

}  // namespace dmlbits
