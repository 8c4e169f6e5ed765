// What dmlbits can run on, as data, and the release of the GPU devices runs leave.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dmlbits/ops.hpp"
#include "dmlbits/options.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits {

// ---- The devices -------------------------------------------------------------------------
// What dmlbits can run on, as data: the CPU backends, the D3D12 runtime with each adapter and the
// device it creates, DirectML (whether DirectML.dll loads, its version, the highest feature level
// its device reports), and what `--backend auto` picks for a large output. The faces format it:
// `dmlbits devices` prints text (app/cmd_devices.cpp), and its --json and Python's
// dmlbits.devices() print devices_json(), the one writer of that document. Both word the data
// with dmlbits/timing.hpp's functions and the two below (auto_large_outputs_text,
// auto_reason_text), so that the text and the JSON say the same.

// "cpu" and "cpu-reference".
struct CpuDevice {
  BackendKind backend{};
  DeviceDescription device;       // the device a run reports (RunTiming::device)
  std::vector<std::string> isas;  // cpu: every instruction set --isa takes on this CPU
  std::string isa;                // cpu: the one a run uses unless told
  unsigned threads = 0;           // cpu: the threads a run uses unless told
  ThreadTeam team;                // cpu: those threads and why (thread_team_reason: "2 CPUs this process may run on")
};

// One D3D12 adapter and the device created on it.
struct AdapterDevice {
  unsigned index = 0;  // what --adapter takes
  std::string name, vendor;
  std::uint32_t vendor_id = 0, device_id = 0;
  std::string type;  // Vulkan's device type; "" where DXGI says nothing
  bool software = false;
  std::uint64_t memory_bytes = 0;
  std::string api, api_version;             // "Vulkan" or "DXGI", and its version
  bool is_default = false;                  // the d3d12 backend's default adapter
  bool has_device = false;                  // a D3D12 device could be created on it
  std::string feature_level, shader_model;  // the device's ("11_0", "5.1")
  std::uint64_t timestamp_frequency = 0;
  bool uma = false, cache_coherent_uma = false;
  std::string error;  // no device: the device's error, or "" where the backend as a whole is unavailable
};

// Why the d3d12 backend cannot run here.
enum class D3d12Unavailable : std::uint8_t {
  none,        // it can
  runtime,     // not built, or its runtime does not load: `detail` says why
  no_adapter,  // no adapter was enumerated: `detail` is the enumeration's error
  no_device,   // no adapter could create a D3D12 device
};

struct D3d12Devices {
  bool built = false;
  bool available = false;                                 // built, the runtime loads and some adapter creates a device
  D3d12Unavailable unavailable = D3d12Unavailable::none;  // not available: why (d3d12_unavailable_text)
  std::string detail;                                     // the runtime's or the enumeration's message
  std::vector<AdapterDevice> adapters;
  double enumeration_s = 0;
  DeviceDescription device;  // available: the default adapter's device as a run reports it (DeviceKind::none if none)
};

struct DirectmlDevice {
  bool built = false, found = false, available = false;
  std::string library, path, version;
  std::optional<FeatureLevel> max_feature_level;
  std::string adapter;       // the D3D12 adapter its device was created on
  std::string reason;        // not found or no device: why
  DeviceDescription device;  // available: its device, with the highest feature level it reports
};

// What `--backend auto` does with an output of kAutoGpuMinBytes or more: cpu, unless its cost
// rule (lib/src/run/auto_rule.hpp) estimates the hardware adapter faster for a typical large
// run (an `and` of two kAutoExampleBytes inputs).
inline constexpr std::uint64_t kAutoExampleBytes = std::uint64_t{256} << 20;
struct AutoDevices {
  std::uint64_t gpu_min_bytes = 0;        // kAutoGpuMinBytes
  std::optional<unsigned> large_adapter;  // where a large output runs: d3d12 on this adapter,
  std::string large_adapter_name;         // or the cpu when none
  // Why: decide_auto's estimate for kAutoExampleBytes on the hardware adapter auto would look
  // at; none when there is no such adapter with a device.
  std::optional<AutoEstimate> estimate;
};
// "no adapter could create a D3D12 device", "no adapter: ...", the runtime's message; "" if available.
std::string d3d12_unavailable_text(const D3d12Devices& d3d12);
// Why an adapter has no device: its own error, else why the backend is unavailable.
std::string adapter_error_text(const D3d12Devices& d3d12, const AdapterDevice& adapter);
// "d3d12 on adapter 0 (NAME)" or "cpu"
std::string auto_large_outputs_text(const AutoDevices& automatic);
// "no hardware adapter", or "an `and` of two 256 MiB inputs: adapter 0 (...) is discrete:
// estimated ... s on d3d12 (...) against ... s on the CPU backend's 2 threads; ..."
std::string auto_reason_text(const AutoDevices& automatic);

struct DeviceList {
  std::vector<CpuDevice> cpu;
  D3d12Devices d3d12;
  DirectmlDevice directml;
  AutoDevices automatic;
};

// Creates (or reuses) a D3D12 device on every adapter, a few tens of milliseconds each. Never
// throws for a missing runtime or a failed device: the list says why.
DeviceList list_devices();

// Releases the GPU devices that runs have left (the D3D12 devices, and under vkd3d the Vulkan
// devices and instances), now. Call it before the process ends, from the thread that ends it,
// after the last run: the CLI's main does, and so does the Python module at interpreter exit.
// Devices are never released otherwise, neither by static destructors nor exit handlers, since a
// Vulkan driver's own exit handler may already have run by then; a device some backend still
// holds at this call (a run on another thread) stays, and is never released. A later run
// creates a device again. Thread-safe; never throws.
void release_gpu_devices();

// `dmlbits devices --json`: {"backends" (those a run can use, each with its "device"), "d3d12",
// "directml", "auto"}, indented, with a final newline.
std::string devices_json(const DeviceList& devices);

// The threads the CPU backend's large runs use by the machine's rule, whatever DMLBITS_THREADS
// says: the CPUs this process may run on (affinity mask, cgroup quota), at most where more stop
// paying. For faces that share them between tasks running at once (dmlbits.dask).
unsigned machine_cpu_threads();

}  // namespace dmlbits
