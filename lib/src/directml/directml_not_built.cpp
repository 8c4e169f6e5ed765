// The directml backend outside Windows: listed (devices, --backend directml), and says why it
// cannot run.
#include <fmt/format.h>

#include "directml_backend.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {
constexpr const char* kNotBuilt =
    "not built: Windows only (DirectML.dll; on Linux run the Windows build under wine: scripts/directml-wine)";
}

bool directml_built() { return false; }

DirectmlInfo probe_directml() {
  DirectmlInfo info;
  info.error = kNotBuilt;
  return info;
}

struct DirectmlBackend::Impl {};

DirectmlBackend::DirectmlBackend(DirectmlBackendOptions) {
  throw Error(Errc::backend, fmt::format("the directml backend cannot run: {}", kNotBuilt));
}
DirectmlBackend::~DirectmlBackend() = default;
DeviceDescription DirectmlBackend::device_description() const {
  return {.kind = DeviceKind::not_built, .not_built = kNotBuilt};
}
std::optional<std::string> DirectmlBackend::unsupported_reason(const ValidatedOp&) const {
  return std::string(kNotBuilt);
}
void DirectmlBackend::run(const ValidatedOp&, const ExecuteBuffers&) { throw Error(Errc::backend, kNotBuilt); }
void DirectmlBackend::run_graph(const ValidatedGraph&, const GraphBuffers&) { throw Error(Errc::backend, kNotBuilt); }
std::uint64_t DirectmlBackend::compiled_graph_runs() const { return 0; }
std::vector<PhaseTime> DirectmlBackend::detail_phases() const { return {}; }

std::optional<std::string> directml_create_operator(const DmlOperatorDesc&, FeatureLevel) {
  throw Error(Errc::backend, kNotBuilt);
}

}  // namespace dmlbits
