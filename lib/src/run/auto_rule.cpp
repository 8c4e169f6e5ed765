#include "auto_rule.hpp"

#include <fmt/format.h>

#include "d3d12_backend.hpp"

namespace dmlbits {

AutoAdapter auto_adapter_description(const GpuAdapter& adapter) {
  return AutoAdapter{fmt::format("adapter {} ({})", adapter.index, adapter.name), adapter.software,
                     adapter.type == "integrated"};
}

AutoDecision decide_auto(const AutoAdapter& adapter, const AutoWork& work, const AutoRates& rates) {
  AutoDecision d;
  const double bytes = static_cast<double>(work.input_bytes) + static_cast<double>(work.output_bytes);
  const unsigned threads = work.cpu_threads ? work.cpu_threads : 1;
  d.cpu_seconds = bytes / (threads * rates.cpu_thread_bytes_per_s);
  if (adapter.software) {
    d.reason = fmt::format("{} is software, slower than the CPU backend; --backend d3d12 uses it anyway", adapter.label);
    return d;
  }
  d.gpu_seconds = rates.device_seconds + bytes / rates.copy_bytes_per_s +
                  (adapter.uma ? 0.0 : bytes / rates.bus_bytes_per_s) +
                  bytes / (adapter.uma ? rates.uma_bytes_per_s : rates.discrete_bytes_per_s);
  d.gpu = d.gpu_seconds < d.cpu_seconds;
  const std::string path = adapter.uma ? "every byte copied into and out of its heaps by one thread"
                                       : "every byte copied into and out of its heaps by one thread, and over the bus";
  d.reason = fmt::format("{} is {}: estimated {:.3g} s on d3d12 ({}, the device's creation) against {:.3g} s on the CPU backend's {} thread{}{}",
                         adapter.label, adapter.uma ? "UMA" : "discrete", d.gpu_seconds, path, d.cpu_seconds, threads, threads == 1 ? "" : "s",
                         d.gpu ? "" : "; --backend d3d12 uses it anyway");
  return d;
}

}  // namespace dmlbits
