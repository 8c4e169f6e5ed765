// `--backend auto`'s rule between the CPU backend and a D3D12 adapter, by estimated cost (#36):
// one function over a described adapter and the run's sizes, so that the rule is tested over
// adapters this machine does not have. make_auto (backend.cpp) and `dmlbits devices` apply it.
//
// The model. Both paths are bound by memory, not arithmetic: one element-wise operator from and
// to host memory moves each input byte and each output byte once.
//   cpu    (in + out) / (threads x the CPU backend's rate per thread)
//   d3d12  the device's creation
//          + (in + out) / the copy rate: the d3d12 backend copies every input byte into an upload
//            heap and every output byte out of a readback heap, on the calling thread (both
//            heaps are host memory that the CPU writes and reads, on a UMA adapter too)
//          + (in + out) / the bus rate, for an adapter whose memory is not the host's
//          + (in + out) / the adapter's memory rate (the kernel)
// Software adapters (lavapipe, WARP) are never taken: their "GPU" is these same CPU cores.
// With the rates below the d3d12 path never wins: its copies alone take one thread as long as
// the CPU backend's whole run takes on one, and the bus and the device come on top; `--backend
// d3d12` still gives the GPU's answer. A d3d12 path without the copies (a UMA adapter computing
// on host memory in place) would set copy_bytes_per_s to infinity and win wherever its rate
// beats the CPU's. The measurements behind the rates: testdata/benchmarks.md, "Issue #39: the
// library returns data".
#pragma once

#include <cstdint>
#include <string>

#include "dmlbits/timing.hpp"

namespace dmlbits {

// What auto knows of an adapter before it creates a device on it.
struct AutoAdapter {
  unsigned index = 0;  // for the estimate's words: "adapter 0 (NVIDIA H100 80GB HBM3)"
  std::string name;
  bool software = false;  // a CPU implementation (GpuAdapter::software)
  // Its memory is the host's (UMA): Vulkan's integrated type, or D3D12's UMA architecture. No
  // bus between them; DXGI, which does not say, counts as discrete.
  bool uma = false;
};
struct GpuAdapter;
// An enumerated adapter as auto sees it: UMA when Vulkan calls it integrated.
AutoAdapter auto_adapter_description(const GpuAdapter& adapter);

// The run: bytes read from the inputs and written to the output, and the CPU backend's threads.
struct AutoWork {
  std::uint64_t input_bytes = 0;
  std::uint64_t output_bytes = 0;
  unsigned cpu_threads = 1;
};

// Rates in bytes per second (each byte read or written counted once) and the device's creation
// (what each rests on: testdata/benchmarks.md, "Issue #39: the library returns data").
struct AutoRates {
  double cpu_thread_bytes_per_s = 16e9;  // the CPU backend on one thread
  double copy_bytes_per_s = 16e9;        // the d3d12 backend's copies into and out of its heaps, one thread
  double bus_bytes_per_s = 25e9;         // PCIe 4.0 x16 in practice
  double discrete_bytes_per_s = 1e12;    // a discrete GPU's kernels
  double uma_bytes_per_s = 100e9;        // an integrated GPU shares the host's memory
  double device_seconds = 0.03;          // creating a vkd3d device
};

// The rule: d3d12 (AutoEstimate::gpu) only when the adapter is hardware and its estimated time is
// below the CPU's. auto_estimate_text (dmlbits/timing.hpp) words the estimate.
AutoEstimate decide_auto(const AutoAdapter& adapter, const AutoWork& work, const AutoRates& rates = {});

}  // namespace dmlbits
