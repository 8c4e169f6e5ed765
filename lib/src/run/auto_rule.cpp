#include "auto_rule.hpp"

#include "d3d12_backend.hpp"

namespace dmlbits {

AutoAdapter auto_adapter_description(const GpuAdapter& adapter) {
  return AutoAdapter{adapter.index, adapter.name, adapter.software, adapter.type == "integrated"};
}

AutoEstimate decide_auto(const AutoAdapter& adapter, const AutoWork& work, const AutoRates& rates) {
  AutoEstimate d;
  d.adapter_index = adapter.index;
  d.adapter_name = adapter.name;
  d.software = adapter.software;
  d.uma = adapter.uma;
  const double bytes = static_cast<double>(work.input_bytes) + static_cast<double>(work.output_bytes);
  d.cpu_threads = work.cpu_threads ? work.cpu_threads : 1;
  d.cpu_seconds = bytes / (d.cpu_threads * rates.cpu_thread_bytes_per_s);
  if (adapter.software) return d;
  d.gpu_seconds = rates.device_seconds + bytes / rates.copy_bytes_per_s +
                  (adapter.uma ? 0.0 : bytes / rates.bus_bytes_per_s) +
                  bytes / (adapter.uma ? rates.uma_bytes_per_s : rates.discrete_bytes_per_s);
  d.gpu = d.gpu_seconds < d.cpu_seconds;
  return d;
}

}  // namespace dmlbits
