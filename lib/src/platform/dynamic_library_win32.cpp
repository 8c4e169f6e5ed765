// The Win32 implementation of dynamic_library.hpp: LoadLibraryW and GetProcAddress.
#include "dynamic_library.hpp"

#include "win32.hpp"

namespace dmlbits {
namespace {

std::string system_message(DWORD error) {
  wchar_t* text = nullptr;
  const DWORD n = ::FormatMessageW(
      FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS, nullptr, error, 0,
      reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n ? win32::narrow({text, n}) : "error " + std::to_string(error);
  if (text) ::LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.')) out.pop_back();
  return out;
}

}  // namespace

DynamicLibrary DynamicLibrary::open(const std::string& name) {
  DynamicLibrary lib;
  // A bare name is searched for in the system folders only, never in the current folder first
  // (a d3d12.dll planted beside a user's data must not be loaded).
  const bool bare = name.find_first_of("/\\") == std::string::npos;
  lib.handle_ = ::LoadLibraryExW(win32::widen(name).c_str(), nullptr, bare ? LOAD_LIBRARY_SEARCH_SYSTEM32 : 0);
  if (lib.handle_ == nullptr) lib.error_ = name + ": " + system_message(::GetLastError());
  return lib;
}

void* DynamicLibrary::symbol(const char* symbol) const noexcept {
  if (handle_ == nullptr) return nullptr;
  return reinterpret_cast<void*>(::GetProcAddress(static_cast<HMODULE>(handle_), symbol));
}

}  // namespace dmlbits
