#include "dmlbits/timing.hpp"

namespace dmlbits {

double RunTiming::phase(const std::string& name) const {
  for (const auto& p : phases)
    if (p.name == name) return p.seconds;
  return 0;
}

double RunTiming::execute_gbps() const {
  const double s = phase("execute");
  return s > 0 ? static_cast<double>(execute_bytes) * execute_runs / s / 1e9 : 0;
}

}  // namespace dmlbits
