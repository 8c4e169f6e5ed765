// The D3D12 backend ("d3d12"): the operators as compute shaders (gpu_kernel.hpp) on a Direct3D 12
// device. On Linux the D3D12 implementation is vkd3d (D3D12 over Vulkan), loaded with dlopen at
// run time, so one binary runs where it is absent; adapters are the Vulkan physical devices,
// listed without creating a D3D12 device (vkd3d picks its Vulkan device by index from the
// environment variable VKD3D_VULKAN_DEVICE, which this backend sets for --adapter).
//
// Nothing here needs the D3D12 headers: when the backend is not compiled in (no vkd3d headers),
// every function still exists and reports why it cannot run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/backend.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits {

// One Vulkan physical device, as the Vulkan loader lists it.
struct GpuAdapter {
  unsigned index = 0;             // position in vkEnumeratePhysicalDevices (VKD3D_VULKAN_DEVICE)
  std::string name;               // "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::string vendor;             // "NVIDIA", "AMD", "Intel", "Mesa", or the id in hex
  std::string type;               // "discrete", "integrated", "virtual", "cpu", "other"
  bool software = false;          // a CPU implementation (lavapipe, SwiftShader), like WARP
  std::uint64_t device_local_bytes = 0;  // sum of the device-local memory heaps
  std::string api_version;        // Vulkan version the driver supports, "1.3.230"
};

struct AdapterList {
  std::vector<GpuAdapter> adapters;
  std::string error;   // why the list is empty: no Vulkan loader, instance creation failed...
  double seconds = 0;  // time the enumeration took (loading the loader included)
};

// Whether the backend was compiled in (vkd3d's or DirectX-Headers were found at build time).
bool d3d12_built();
// The Vulkan physical devices, enumerated once per process (later calls return the first
// result). Never creates a D3D12 device and never throws.
const AdapterList& gpu_adapters();
// A kernel device node a hardware Vulkan driver would use (/dev/dri/renderD*, /dev/nvidia*,
// /dev/dxg on WSL), or nullopt when there is none: then no hardware adapter can exist, and
// `auto` need not pay for enumerating adapters (creating a Vulkan instance loads every
// installed driver; testdata/benchmarks.md, "D3D12 start-up").
std::optional<std::string> gpu_device_node();
// Loads the D3D12 runtime library if needed: nullopt when it loads, else the reason
// ("libvkd3d-utils.so.1: cannot open shared object file: No such file or directory").
// The library is named by DMLBITS_VKD3D_LIBRARY when set (a path or a soname).
std::optional<std::string> d3d12_runtime_unavailable_reason();
// The adapter `spec` names: a decimal index, or a case-insensitive substring of the name
// (which must match exactly one adapter). Throws Errc::usage listing the adapters otherwise.
const GpuAdapter& find_adapter(const std::vector<GpuAdapter>& adapters, std::string_view spec);
// The adapter vkd3d uses when none is named: VKD3D_VULKAN_DEVICE if set, else the first
// discrete GPU, else the first integrated one, else the first device (vkd3d 1.2's own rule).
// nullptr when there are no adapters.
const GpuAdapter* default_adapter(const std::vector<GpuAdapter>& adapters);
// The adapter `--backend auto` runs a large output on when no adapter is named: the default
// adapter if it is hardware, else the first hardware adapter; nullptr when all are software
// (lavapipe is slower than the CPU backend). `dmlbits devices` reports the same choice.
inline const GpuAdapter* auto_adapter(const std::vector<GpuAdapter>& adapters) {
  if (const GpuAdapter* preferred = default_adapter(adapters); preferred && !preferred->software) return preferred;
  for (const auto& a : adapters)
    if (!a.software) return &a;
  return nullptr;
}

// What the D3D12 device reports.
struct D3d12DeviceInfo {
  GpuAdapter adapter;
  std::string feature_level;        // "11_0"
  std::string shader_model;         // "5.1"
  bool uma = false;
  bool cache_coherent_uma = false;
  std::uint64_t timestamp_frequency = 0;  // ticks per second
  double creation_seconds = 0;      // D3D12CreateDevice, queue, root signature
};

struct D3d12BackendOptions {
  std::string adapter;  // index or name substring; "" = default_adapter()
  // Largest buffer the backend creates; tensors beyond it run in chunks. At most 1 GiB (one
  // buffer above 2 GiB crashed lavapipe's compiled shader); tests lower it to exercise chunking.
  std::uint64_t max_buffer_bytes = std::uint64_t{256} << 20;
};

class D3d12Backend final : public Backend {
 public:
  // Loads the runtime and creates (or reuses: one device per adapter per process) the device.
  // Throws Errc::backend with the reason when that fails, Errc::usage for an unknown adapter.
  explicit D3d12Backend(D3d12BackendOptions options = {});
  ~D3d12Backend() override;

  std::string_view name() const override { return "d3d12"; }
  // "llvmpipe (LLVM 15.0.6, 256 bits), software, D3D feature level 11_0, shader model 5.1"
  std::string device_description() const override;
  std::optional<std::string> unsupported_reason(const ValidatedOp& op) const override;
  void run(const ValidatedOp& op, const ExecuteBuffers& buffers) override;
  std::vector<PhaseTime> detail_phases() const override;

  const D3d12DeviceInfo& device_info() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Device details for `dmlbits devices`: creates (or reuses) the device on `adapter`. Throws
// Errc::backend when the runtime is missing or the device cannot be created.
D3d12DeviceInfo probe_d3d12_device(const GpuAdapter& adapter);

}  // namespace dmlbits
