#include "dmlbits/backend.hpp"

#include <array>

#include <fmt/format.h>

#include "dmlbits/cpu_reference.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {
constexpr std::array<std::string_view, 1> kBackendNames{"cpu"};
}

std::span<const std::string_view> backend_names() { return kBackendNames; }

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options) {
  (void)options;  // the reference backend has one implementation
  if (name == "cpu") return std::make_unique<CpuReferenceBackend>();
  throw Error(Errc::usage, fmt::format("unknown backend '{}' (available: {})", name, fmt::join(kBackendNames, ", ")));
}

}  // namespace dmlbits
