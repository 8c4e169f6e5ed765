#include "dmlbits/backend.hpp"

#include <array>

#include <fmt/format.h>

#include "dmlbits/cpu_backend.hpp"
#include "dmlbits/cpu_reference.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {
constexpr std::array<std::string_view, 2> kBackendNames{"cpu", "cpu-reference"};
}

std::span<const std::string_view> backend_names() { return kBackendNames; }

std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options) {
  if (name == "cpu") {
    if (options.isa.empty()) return std::make_unique<CpuBackend>(best_isa());
    const auto isa = parse_isa(options.isa);
    if (!isa)
      throw Error(Errc::usage, fmt::format("unknown instruction set '{}' (known: {})", options.isa, isa_names_help()));
    return std::make_unique<CpuBackend>(*isa);  // Errc::unsupported if the CPU lacks it
  }
  if (name == "cpu-reference") {
    if (!options.isa.empty())
      throw Error(Errc::usage, fmt::format("the cpu-reference backend has no choice of instruction set (asked for '{}')",
                                           options.isa));
    return std::make_unique<CpuReferenceBackend>();
  }
  throw Error(Errc::usage, fmt::format("unknown backend '{}' (available: {})", name, fmt::join(kBackendNames, ", ")));
}

}  // namespace dmlbits
