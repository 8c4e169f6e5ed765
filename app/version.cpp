// dmlbits --version: what a bug report needs to know about the binary.
#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits::app {
namespace {

// The compiler's own account of itself.
std::string compiler() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  std::string name = fmt::format("GCC {}", __VERSION__);
#if defined(__MINGW64__)
  name += " (mingw-w64)";
#endif
  return name;
#elif defined(_MSC_VER)
  return fmt::format("MSVC {}", _MSC_FULL_VER);
#else
  return "unknown";
#endif
}

}  // namespace

std::string version_text() {
  std::vector<std::string> backends;
  for (BackendKind kind : built_backends()) {
    if (kind == BackendKind::cpu) backends.push_back(fmt::format("cpu ({})", fmt::join(isa_names(), ", ")));
    else backends.emplace_back(backend_name(kind));
  }
  // DMLBITS_VERSION is project()'s VERSION (CMakeLists.txt), the one place it is written.
  return fmt::format("dmlbits {}\ncommit {}\ncompiler {}\nbackends {}", DMLBITS_VERSION, kBuildCommit, compiler(),
                     fmt::join(backends, ", "));
}

}  // namespace dmlbits::app
