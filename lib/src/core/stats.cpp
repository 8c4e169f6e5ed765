#include "stats_json.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dmlbits {
namespace {

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double pos = p * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
}

}  // namespace

SampleStats compute_stats(std::vector<double> samples) {
  SampleStats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.min = samples.front();
  s.max = samples.back();
  s.median = percentile(samples, 0.5);
  s.p90 = percentile(samples, 0.9);
  s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(samples.size());
  double var = 0;
  for (double x : samples) var += (x - s.mean) * (x - s.mean);
  s.stddev = std::sqrt(var / static_cast<double>(samples.size()));
  return s;
}

nlohmann::json to_json(const SampleStats& s) {
  return {{"count", s.count}, {"min", s.min}, {"median", s.median}, {"mean", s.mean},
          {"p90", s.p90},     {"max", s.max}, {"stddev", s.stddev}};
}

}  // namespace dmlbits
