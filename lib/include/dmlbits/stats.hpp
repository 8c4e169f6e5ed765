// Summary statistics of timing samples (DxDispatch-style cold/hot runs).
#pragma once

#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace dmlbits {

struct SampleStats {
  std::size_t count = 0;
  double min = 0, median = 0, mean = 0, p90 = 0, max = 0, stddev = 0;  // population stddev
};

// Percentiles by linear interpolation between closest ranks (NumPy's default method).
SampleStats compute_stats(std::vector<double> samples);
nlohmann::json to_json(const SampleStats& s);

}  // namespace dmlbits
