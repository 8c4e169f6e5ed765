// What dmlbits can run on: the CPU backends, the D3D12 runtime with each adapter and the device
// it creates, DirectML (whether DirectML.dll loads, its version, the highest feature level its
// device reports), and what `--backend auto` picks for a large output. For `dmlbits devices`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace dmlbits {

struct DevicesReport {
  std::string text;     // one line per backend, one per adapter: what `dmlbits devices` prints
  nlohmann::json json;  // the same, for --json: {"backends", "d3d12", "directml", "auto"}
};

// Creates (or reuses) a D3D12 device on every adapter, a few tens of milliseconds each. Never
// throws for a missing runtime or a failed device: the report says why.
DevicesReport describe_devices();

}  // namespace dmlbits
