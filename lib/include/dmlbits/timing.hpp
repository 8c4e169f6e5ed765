// Wall-clock timing of a run's phases.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

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
  std::string name;  // "read", "validate", "execute", "write"
  double seconds = 0;
};

struct RunTiming {
  std::vector<PhaseTime> phases;
  double total_seconds = 0;
  std::uint64_t execute_bytes = 0;  // bytes the execute step read and wrote
  std::string backend;
  std::string device;
  std::string selection;  // why auto chose the backend (Backend::selection_reason), or ""
  // The backend's own phases (Backend::detail_phases): summed over every run of the backend,
  // warm-up runs and chunks included, plus its device creation. Empty for the CPU backends.
  std::vector<PhaseTime> backend_phases;

  double phase(const std::string& name) const;
  // execute_bytes / execute seconds, in GB/s (10^9 bytes); 0 if the step took no time.
  double execute_gbps() const;
};

}  // namespace dmlbits
