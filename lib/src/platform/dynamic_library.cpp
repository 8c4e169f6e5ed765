// The POSIX implementation of dynamic_library.hpp.
#include "dynamic_library.hpp"

#include <dlfcn.h>

namespace dmlbits {

DynamicLibrary DynamicLibrary::open(const std::string& name) {
  DynamicLibrary lib;
  lib.handle_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib.handle_ == nullptr) {
    const char* e = ::dlerror();
    lib.error_ = e ? e : name + ": cannot be loaded";
  }
  return lib;
}

DynamicLibrary DynamicLibrary::open_beside_program(const std::string& name) { return open(name); }

std::string DynamicLibrary::file_path() const { return {}; }

std::optional<std::string> DynamicLibrary::file_version() const { return std::nullopt; }

void* DynamicLibrary::symbol(const char* symbol) const noexcept { return handle_ ? ::dlsym(handle_, symbol) : nullptr; }

}  // namespace dmlbits
