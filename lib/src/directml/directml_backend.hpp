// The DirectML backend ("directml"): the operators run by Microsoft's DirectML itself, from the
// same DML_*_OPERATOR_DESC that `--explain` prints. Windows only: DirectML.dll is loaded at run
// time (LoadLibrary; DMLBITS_DIRECTML_LIBRARY names another file), on the d3d12 backend's D3D12
// device for the adapter --adapter chooses (d3d12_device.hpp), by the d3d12 backend's rules.
// Elsewhere the backend exists and says it is not built, like the d3d12 stub.
//
// The backend is the oracle for dmlbits' semantics, so it runs what DirectML accepts and
// nothing else: a shift needs --shift-overflow directml (DirectML's own rule for counts of the
// width and more), and an operation DirectML refuses fails with its HRESULT.
//
// Nothing here needs a Windows header.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend.hpp"
#include "dml_desc.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits {

// Whether this build has the backend (a Windows build).
bool directml_built();

// What `dmlbits devices` says of DirectML. Never throws.
struct DirectmlInfo {
  bool built = false;
  bool found = false;   // DirectML.dll loaded and exports DMLCreateDevice1
  std::string library;  // the file asked for ("DirectML.dll" or DMLBITS_DIRECTML_LIBRARY)
  std::string path;     // the file loaded, as the system reports it
  std::string version;  // its version resource: "1.15.4.0 (1.15.4+241025-1615.1.dml-1.15.fac7597)"
  std::optional<FeatureLevel> max_feature_level;  // what a device reports (CheckFeatureSupport)
  std::string adapter;                            // the default D3D12 adapter, which the device was created on
  std::string error;                              // why it is not found or no device could be created
};
DirectmlInfo probe_directml();

struct DirectmlBackendOptions {
  // The D3D12 adapter, as --adapter gives it: "" is the d3d12 backend's default adapter, else
  // an index or part of a name (chosen_adapter()).
  std::string adapter;
  // Largest buffer the backend creates; larger tensors run in chunks (each a DirectML operator
  // of its own shape). 0: DMLBITS_DIRECTML_MAX_BUFFER_BYTES if set (4096 to 1 GiB; anything else
  // is Errc::usage), else 256 MiB. Tests lower it to exercise chunking.
  std::uint64_t max_buffer_bytes = 0;
};

class DirectmlBackend final : public Backend {
 public:
  // Loads DirectML.dll and takes the d3d12 backend's device on options.adapter (creating it if
  // needed). Throws Errc::backend naming the file when it is missing or too old (no
  // DMLCreateDevice1), when D3D12 or the adapter is missing, or with the HRESULT of the call that
  // failed; Errc::usage when options.adapter names no adapter.
  // The DirectML device is created at the first run, with the operation's feature level as
  // DMLCreateDevice1's minimum (one per level per process).
  explicit DirectmlBackend(DirectmlBackendOptions options = {});
  ~DirectmlBackend() override;

  std::string_view name() const override { return "directml"; }
  // "DirectML 1.15.4.0 (...) on llvmpipe (LLVM 15.0.6, 256 bits)"
  DeviceDescription device_description() const override;
  std::optional<std::string> unsupported_reason(const ValidatedOp& op) const override;
  void run(const ValidatedOp& op, const ExecuteBuffers& buffers) override;
  // A graph of two or more nodes is one DML_GRAPH_DESC compiled with IDMLDevice1::CompileGraph
  // (one DirectML operator per node, constants passed as graph inputs; compiled once per shape
  // and cached) and run in one dispatch. A single node runs as run() does; a graph with a tensor
  // past max_buffer_bytes runs node by node, each node in chunks. What it cannot run is what
  // unsupported_graph_reason() says (any node's unsupported_reason()); a graph DirectML refuses
  // fails with CompileGraph's HRESULT.
  void run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) override;
  // How many run_graph() calls ran as one compiled DirectML graph, for tests.
  std::uint64_t compiled_graph_runs() const;
  // device (D3D12 and DirectML devices), compile (CreateOperator, CompileOperator, CompileGraph),
  // initialize (the operator initializer), upload, dispatch (GPU timestamps), readback.
  std::vector<PhaseTime> detail_phases() const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// For the conformance tests: IDMLDevice::CreateOperator alone on `desc` (any descriptor, not
// necessarily one validate() accepts), on the process's DirectML device created with `level` as
// its minimum. nullopt when DirectML accepts it, else "CreateOperator failed: 0x80070057
// (E_INVALIDARG)". Throws Errc::backend when DirectML cannot run here. The descriptor's
// DimensionCount is desc.output's (0 dimensions are passed as such, with no Sizes).
std::optional<std::string> directml_create_operator(const DmlOperatorDesc& desc, FeatureLevel level);

}  // namespace dmlbits
