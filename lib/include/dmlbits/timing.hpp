// Wall-clock timing of a run's phases.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "dmlbits/describe.hpp"

namespace dmlbits {

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
  std::string backend;          // its name: "cpu", "d3d12"
  DeviceDescription device;     // what the run computed on (device_text words it)
  Selection selection;          // why auto chose the backend (selection_text); named: SelectionRule::named
  ThreadTeam threads;           // CPU backends: their thread count and why (thread_team_text); else 0 threads
  // The backend's own phases (Backend::detail_phases): summed over every run of the backend,
  // warm-up runs and chunks included, plus its device creation. Empty for the CPU backends.
  std::vector<PhaseTime> backend_phases;

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
