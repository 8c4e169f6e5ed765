// What a run computed on, why `--backend auto` chose its backend and why a CPU backend uses the
// threads it does: as data, which the library returns (RunTiming, DeviceList), and the words for
// it, which only the faces and the documents they share call (the command line's -v, --time and
// `devices`; the JSON of --time-json, `devices --json` and Python's timing and devices()). The
// run path never formats a sentence: a run that is not reported pays for no text.
#pragma once

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
  unsigned cpus = 1;            // CPUs this process may run on
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
// backend's 2 threads; --backend d3d12 uses it anyway"
std::string auto_estimate_text(const AutoEstimate& estimate);
// "auto chose cpu: the output (1 KiB) is below 16 MiB, ..."; "" for a named backend.
std::string selection_text(const Selection& selection);

}  // namespace dmlbits
