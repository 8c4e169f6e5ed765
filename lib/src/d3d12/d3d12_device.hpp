// The d3d12 backend's device, for another backend that runs on the same D3D12 device: DirectML
// (lib/src/directml, Windows only), so that it takes the adapter the user chose (--adapter, or
// the default) by the same rules instead of choosing again. Free of D3D12 types: the includer
// brings the D3D12 headers it builds with.
//
// Contract:
//   - shared_device(spec) resolves `spec` as `--backend d3d12 --adapter spec` does
//     (chosen_adapter(): "" is default_adapter(), else an index or a name) and returns the
//     process's one device on that adapter, the very one D3d12Backend uses, creating it (with
//     its direct queue) on first use. Throws Errc::backend (no D3D12 runtime, no adapter, device
//     creation failed) or Errc::usage (a spec that names no adapter).
//   - `device` and `queue` stay valid while `owner` (any copy of it) lives. The pointers are
//     not AddRef'd for the caller: AddRef what is kept beyond `owner`'s life.
//   - The queue is shared with the d3d12 backend, which records and waits on it under
//     `*mutex`: hold that mutex from recording a submission until its fence wait is over, and
//     leave the queue idle when releasing it. The d3d12 backend holds it for a whole run.
//     owner->execute(list) (d3d12_runtime.hpp) submits a closed list and waits for it with the
//     device's own fence, which leaves the queue idle.
//   - The device is created at D3D_FEATURE_LEVEL_11_0; `adapter` is the GpuAdapter it runs on.
#pragma once

#include <memory>
#include <mutex>
#include <string_view>

#include "d3d12_backend.hpp"

struct ID3D12Device;
struct ID3D12CommandQueue;

namespace dmlbits::d3d12 {

class Device;

struct SharedDevice {
  std::shared_ptr<Device> owner;
  const GpuAdapter* adapter = nullptr;  // owned by `owner`
  ID3D12Device* device = nullptr;
  ID3D12CommandQueue* queue = nullptr;
  std::mutex* mutex = nullptr;
};

SharedDevice shared_device(std::string_view adapter_spec);

}  // namespace dmlbits::d3d12
