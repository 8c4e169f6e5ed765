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
// the CPU backend's whole run takes on one, and the bus and the device come on top. That is the
// measured state of things (testdata/benchmarks.md, the H100 run: d3d12 8 GB/s end to end, the
// CPU backend 33-47 GB/s on two threads), and `--backend d3d12` still gives the GPU's answer.
// A d3d12 path without the copies (a UMA adapter computing on host memory in place) would set
// copy_bytes_per_s to infinity and win wherever its rate beats the CPU's.
#pragma once

#include <cstdint>
#include <string>

namespace dmlbits {

// What auto knows of an adapter before it creates a device on it.
struct AutoAdapter {
  std::string label;      // "adapter 0 (NVIDIA H100 80GB HBM3)", for the reason
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

// Rates in bytes per second (each byte read or written counted once) and the device's creation.
struct AutoRates {
  // The CPU backend on one thread: the H100 host's two threads moved 33-47 GB/s.
  double cpu_thread_bytes_per_s = 16e9;
  // The d3d12 backend's copies into upload and out of readback heaps, one thread: a memcpy, at
  // best what one thread of the CPU backend moves (the H100 host's upload phase: 8 GB/s).
  double copy_bytes_per_s = 16e9;
  double bus_bytes_per_s = 25e9;          // PCIe 4.0 x16 in practice
  double discrete_bytes_per_s = 1e12;     // a discrete GPU's kernels (H100: 0.8-1.6 TB/s)
  double uma_bytes_per_s = 100e9;         // an integrated GPU shares the host's memory
  double device_seconds = 0.03;           // creating a vkd3d device: 25-45 ms on lavapipe, 230 ms on an H100
};

struct AutoDecision {
  bool gpu = false;
  double cpu_seconds = 0;
  double gpu_seconds = 0;  // 0 for a software adapter (not estimated)
  // "adapter 0 (NVIDIA H100) is discrete: est. 0.412 s on d3d12 (each byte copied by one thread
  // and sent over the bus) against 0.067 s on the CPU backend's 2 threads"
  std::string reason;
};

// The rule: d3d12 only when the adapter is hardware and its estimated time is below the CPU's.
AutoDecision decide_auto(const AutoAdapter& adapter, const AutoWork& work, const AutoRates& rates = {});

}  // namespace dmlbits
