// The D3D12 backend's entry points in a build without D3D12 headers: the backend is still
// listed (devices, --backend d3d12) and says why it cannot run.
#include <fmt/format.h>

#include "d3d12_backend.hpp"
#include "d3d12_device.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {
#if defined(_WIN32)
constexpr const char* kNotBuilt =
    "not built: this dmlbits was compiled without D3D12 headers (install directx-headers-dev and rebuild)";
#else
constexpr const char* kNotBuilt =
    "not built: this dmlbits was compiled without D3D12 headers (install libvkd3d-dev and rebuild)";
#endif
}  // namespace

bool d3d12_built() { return false; }

std::optional<std::string> no_hardware_adapter_reason() { return std::string(kNotBuilt); }

std::string_view d3d12_runtime_name() { return "D3D12"; }

const GpuAdapter& chosen_adapter(std::string_view) {
  throw Error(Errc::backend, fmt::format("the d3d12 backend cannot run: {}", kNotBuilt));
}

const AdapterList& gpu_adapters() {
  static const AdapterList list{{}, kNotBuilt, 0};
  return list;
}

std::optional<std::string> d3d12_runtime_unavailable_reason() { return std::string(kNotBuilt); }

const GpuAdapter& find_adapter(const std::vector<GpuAdapter>&, std::string_view spec) {
  throw Error(Errc::backend, fmt::format("adapter {}: the d3d12 backend is {}", spec, kNotBuilt));
}

const GpuAdapter* default_adapter(const std::vector<GpuAdapter>&) { return nullptr; }

struct D3d12Backend::Impl {};

D3d12Backend::D3d12Backend(D3d12BackendOptions) {
  throw Error(Errc::backend, fmt::format("the d3d12 backend cannot run: {}", kNotBuilt));
}
D3d12Backend::~D3d12Backend() = default;
DeviceDescription D3d12Backend::device_description() const {
  return {.kind = DeviceKind::not_built, .not_built = kNotBuilt};
}
std::optional<std::string> D3d12Backend::unsupported_reason(const ValidatedOp&) const { return std::string(kNotBuilt); }
void D3d12Backend::run(const ValidatedOp&, const ExecuteBuffers&) { throw Error(Errc::backend, kNotBuilt); }
void D3d12Backend::run_graph(const ValidatedGraph&, const GraphBuffers&) { throw Error(Errc::backend, kNotBuilt); }
std::optional<std::string> D3d12Backend::graph_fusion_refusal(const ValidatedGraph&) { return std::string(kNotBuilt); }
std::vector<PhaseTime> D3d12Backend::detail_phases() const { return {}; }
const D3d12DeviceInfo& D3d12Backend::device_info() const {
  static const D3d12DeviceInfo none;
  return none;
}

std::size_t release_d3d12_devices() { return 0; }

D3d12DeviceInfo probe_d3d12_device(const GpuAdapter&) { throw Error(Errc::backend, kNotBuilt); }

d3d12::SharedDevice d3d12::shared_device(std::string_view) {
  throw Error(Errc::backend, fmt::format("the d3d12 backend cannot run: {}", kNotBuilt));
}

}  // namespace dmlbits
