// The D3D12 backend ("d3d12"): the operators as compute shaders (gpu_kernel.hpp) on a Direct3D 12
// device. The D3D12 runtime is loaded at run time (DynamicLibrary), so that one binary runs
// where it is absent:
//   Linux    vkd3d (D3D12 over Vulkan, libvkd3d-utils.so.1); the adapters are the Vulkan
//            physical devices (vulkan_adapters.cpp), listed without creating a D3D12 device,
//            and the device is created on the chosen one through vkd3d_create_device.
//   Windows  d3d12.dll; the adapters are DXGI's (dxgi.dll, dxgi_adapters.cpp), listed without
//            creating a device, and D3D12CreateDevice is given the chosen IDXGIAdapter.
// find_adapter, default_adapter and auto_adapter are the same rules on both (adapters.cpp).
//
// Nothing here needs the D3D12 headers: when the backend is not compiled in (no headers),
// every function still exists and reports why it cannot run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits {

// One adapter as the system's graphics API lists it: Vulkan on Linux, DXGI on Windows.
struct GpuAdapter {
  // Position in gpu_adapters(): vkEnumeratePhysicalDevices' order on Linux (the index
  // VKD3D_VULKAN_DEVICE takes), DXGI's EnumAdapterByGpuPreference(HIGH_PERFORMANCE) order on
  // Windows (EnumAdapters1's where IDXGIFactory6 is missing).
  unsigned index = 0;
  std::string name;             // "llvmpipe (LLVM 15.0.6, 256 bits)"
  std::uint32_t vendor_id = 0;  // PCI vendor id, or Vulkan's (0x10005 is Mesa)
  std::uint32_t device_id = 0;
  std::string vendor;  // "NVIDIA", "AMD", "Intel", "Mesa", or the id in hex
  // Vulkan's device type: "discrete", "integrated", "virtual", "cpu", "other". DXGI has none:
  // "cpu" for a software adapter, else "" (unknown).
  std::string type;
  // A CPU implementation (lavapipe, SwiftShader, WARP): Vulkan's CPU device type, DXGI's
  // DXGI_ADAPTER_FLAG_SOFTWARE, or known by vendor or name (adapters.hpp), since wine's DXGI
  // does not flag lavapipe.
  bool software = false;
  // Vulkan: the sum of the device-local memory heaps. DXGI: DedicatedVideoMemory.
  std::uint64_t memory_bytes = 0;
  std::string api;          // the API that listed it: "Vulkan" or "DXGI"
  std::string api_version;  // Vulkan: the version the driver supports, "1.3.230"; DXGI: "1.6" or "1.1"
};

struct AdapterList {
  std::vector<GpuAdapter> adapters;
  std::string error;   // why the list is empty: no Vulkan loader or DXGI, instance/factory creation failed...
  double seconds = 0;  // time the enumeration took (loading the library included)
};

// Whether the backend was compiled in (vkd3d's or DirectX-Headers were found at build time).
bool d3d12_built();
// The adapters, enumerated once per process (later calls return the first result). Never
// creates a D3D12 device and never throws.
const AdapterList& gpu_adapters();
// Why no hardware adapter can exist here, found without enumerating adapters, or nullopt when
// one may. Linux: no kernel device node a hardware Vulkan driver would use (/dev/dri/renderD*,
// /dev/nvidia*, /dev/dxg on WSL); then `auto` need not pay for enumerating adapters (creating
// a Vulkan instance loads every installed driver; testdata/benchmarks.md, "D3D12 start-up").
// Windows: always nullopt (there are no device nodes, and DXGI's enumeration is cheap).
std::optional<std::string> no_hardware_adapter_reason();
// What the D3D12 runtime is called in messages: "vkd3d" (Linux), "d3d12.dll" (Windows).
std::string_view d3d12_runtime_name();
// Loads the D3D12 runtime library if needed: nullopt when it loads, else the reason
// ("libvkd3d-utils.so.1: cannot open shared object file: No such file or directory").
// The library is named by DMLBITS_VKD3D_LIBRARY (Linux) or DMLBITS_D3D12_LIBRARY (Windows)
// when set (a path or a library name).
std::optional<std::string> d3d12_runtime_unavailable_reason();
// The adapter `spec` names: a decimal index, or a case-insensitive substring of the name
// (which must match exactly one adapter). Throws OptionError (OptionKey::adapter, listing the
// adapters) otherwise, for the face to word.
const GpuAdapter& find_adapter(const std::vector<GpuAdapter>& adapters, std::string_view spec);
// The adapter the runtime would use when none is named. Linux: VKD3D_VULKAN_DEVICE if set,
// else the first discrete GPU, else the first integrated one, else the first device (vkd3d
// 1.2's own rule). Windows: the first adapter, which DXGI's high-performance order makes a
// discrete GPU before an integrated one before software. nullptr when there are no adapters.
// Throws Errc::usage when VKD3D_VULKAN_DEVICE is set and names no device.
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
// The adapter the d3d12 backend runs on for --adapter `spec` ("" = default_adapter()), from
// gpu_adapters(). Throws Errc::backend when the runtime is missing or there is no adapter,
// OptionError for a spec that names none (find_adapter).
const GpuAdapter& chosen_adapter(std::string_view spec);

// What the D3D12 device reports.
struct D3d12DeviceInfo {
  GpuAdapter adapter;
  std::string feature_level;  // "11_0"
  std::string shader_model;   // "5.1"
  bool uma = false;
  bool cache_coherent_uma = false;
  std::uint64_t timestamp_frequency = 0;  // ticks per second
  double creation_seconds = 0;            // D3D12CreateDevice, queue, root signature
};

struct D3d12BackendOptions {
  std::string adapter;  // index or name substring; "" = default_adapter()
  // The most threads its CPU copies use (--threads, or DMLBITS_THREADS as prepare_request
  // resolved it); 0: the machine's team, shared through the process's ThreadLease budget.
  unsigned copy_threads = 0;
  // Largest buffer the backend creates; tensors beyond it run in chunks. At most 1 GiB (one
  // buffer above 2 GiB crashed lavapipe's compiled shader); tests lower it to exercise chunking.
  std::uint64_t max_buffer_bytes = std::uint64_t{256} << 20;
  // Bytes per transfer piece through the upload and readback heaps (d3d12_runtime.hpp,
  // kTransferPieceBytes; at least kInputPaddingBytes); tests lower it to cross piece and slot
  // boundaries with small tensors (no user-visible knob sets it).
  std::uint64_t transfer_piece_bytes = std::uint64_t{8} << 20;
  // The same for a streamed run's pieces (run_staged), and the pieces it keeps in flight (1 to
  // 3); 0: by adapter (d3d12_runtime.hpp, kSoftwareStreamPieceBytes and kSoftwareStreamInFlight).
  std::uint64_t stream_piece_bytes = 0;
  unsigned stream_in_flight = 0;
};

class D3d12Backend final : public Backend {
 public:
  // Loads the runtime and creates (or reuses: one device per adapter per process) the device.
  // Throws Errc::backend with the reason when that fails, Errc::usage for an unknown adapter.
  explicit D3d12Backend(D3d12BackendOptions options = {});
  ~D3d12Backend() override;

  std::string_view name() const override { return "d3d12"; }
  // "llvmpipe (LLVM 15.0.6, 256 bits), software, D3D feature level 11_0, shader model 5.1"
  DeviceDescription device_description() const override;
  std::optional<std::string> unsupported_reason(const ValidatedOp& op) const override;
  void run(const ValidatedOp& op, const ExecuteBuffers& buffers) override;
  // Streamed runs in transfer pieces, read into the upload heaps and written from the readback
  // heaps (Device::stream); always true.
  bool run_staged(const ValidatedOp& op, StagedIo& io) override;
  // A graph of two nodes and more that fusion_refusal() accepts runs as one generated kernel
  // (shaders/graph_kernel.hpp) that computes every node in registers, one dispatch per chunk of
  // at most max_buffer_bytes per buffer; any other graph, and a single node (the operator's own
  // kernel), node by node through run() (Backend::run_graph). The bytes are the same.
  void run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) override;
  // Why run_graph() runs `graph` node by node rather than as one kernel (one node; not
  // is_flat_streamable(); more than 8 input buffers or 26 words of one-element inputs; an
  // operator without a GPU kernel), or nullopt when it fuses it.
  std::optional<std::string> fusion_refusal(const ValidatedGraph& graph) const { return graph_fusion_refusal(graph); }
  // The same without a device (the rule depends on the graph alone), for --explain.
  static std::optional<std::string> graph_fusion_refusal(const ValidatedGraph& graph);
  std::vector<PhaseTime> detail_phases() const override;

  const D3d12DeviceInfo& device_info() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Releases the D3D12 devices no backend holds (d3d12_runtime.cpp says why only this does):
// waits for each device's queue, then vkd3d destroys the Vulkan device and instance under it.
// Returns how many are still held, and so never released. Thread-safe; never throws.
std::size_t release_d3d12_devices();

// Device details for `dmlbits devices`: creates (or reuses) the device on `adapter`. Throws
// Errc::backend when the runtime is missing or the device cannot be created.
D3d12DeviceInfo probe_d3d12_device(const GpuAdapter& adapter);

}  // namespace dmlbits
