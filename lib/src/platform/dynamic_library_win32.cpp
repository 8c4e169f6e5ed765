// The Win32 implementation of dynamic_library.hpp: LoadLibraryW and GetProcAddress.
#include "dynamic_library.hpp"

#include <cwchar>

#include "win32.hpp"

namespace dmlbits {
namespace {

std::string system_message(DWORD error) {
  wchar_t* text = nullptr;
  const DWORD n =
      ::FormatMessageW(FORMAT_MESSAGE_ALLOCATE_BUFFER | FORMAT_MESSAGE_FROM_SYSTEM | FORMAT_MESSAGE_IGNORE_INSERTS,
                       nullptr, error, 0, reinterpret_cast<wchar_t*>(&text), 0, nullptr);
  std::string out = n ? win32::narrow({text, n}) : "error " + std::to_string(error);
  if (text) ::LocalFree(text);
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == '.')) out.pop_back();
  return out;
}

}  // namespace

DynamicLibrary DynamicLibrary::open_searching(const std::string& name, unsigned long bare_search) {
  DynamicLibrary lib;
  const bool bare = name.find_first_of("/\\") == std::string::npos;
  lib.handle_ = ::LoadLibraryExW(win32::widen(name).c_str(), nullptr, bare ? bare_search : 0);
  if (lib.handle_ == nullptr) lib.error_ = name + ": " + system_message(::GetLastError());
  return lib;
}

DynamicLibrary DynamicLibrary::open(const std::string& name) {
  // A bare name is searched for in the system folders only, never in the current folder first
  // (a d3d12.dll planted beside a user's data must not be loaded).
  return open_searching(name, LOAD_LIBRARY_SEARCH_SYSTEM32);
}

DynamicLibrary DynamicLibrary::open_beside_program(const std::string& name) {
  return open_searching(name, LOAD_LIBRARY_SEARCH_APPLICATION_DIR | LOAD_LIBRARY_SEARCH_SYSTEM32);
}

std::string DynamicLibrary::file_path() const {
  if (handle_ == nullptr) return {};
  std::wstring path(32768, L'\0');
  const DWORD n = ::GetModuleFileNameW(static_cast<HMODULE>(handle_), path.data(), static_cast<DWORD>(path.size()));
  if (n == 0 || n >= path.size()) return {};
  path.resize(n);
  return win32::narrow(path);
}

std::optional<std::string> DynamicLibrary::file_version() const {
  const std::string path = file_path();
  if (path.empty()) return std::nullopt;
  const std::wstring wide = win32::widen(path);
  DWORD ignored = 0;
  const DWORD size = ::GetFileVersionInfoSizeW(wide.c_str(), &ignored);
  if (size == 0) return std::nullopt;
  std::string data(size, '\0');
  if (!::GetFileVersionInfoW(wide.c_str(), 0, size, data.data())) return std::nullopt;
  void* p = nullptr;
  UINT len = 0;
  if (!::VerQueryValueW(data.data(), L"\\", &p, &len) || len < sizeof(VS_FIXEDFILEINFO)) return std::nullopt;
  const auto* fixed = static_cast<const VS_FIXEDFILEINFO*>(p);
  std::string out =
      std::to_string(HIWORD(fixed->dwFileVersionMS)) + "." + std::to_string(LOWORD(fixed->dwFileVersionMS)) + "." +
      std::to_string(HIWORD(fixed->dwFileVersionLS)) + "." + std::to_string(LOWORD(fixed->dwFileVersionLS));
  // The string table of the first language the file lists: DirectML's FileVersion names its build.
  struct Translation {
    WORD language, code_page;
  };
  if (::VerQueryValueW(data.data(), L"\\VarFileInfo\\Translation", &p, &len) && len >= sizeof(Translation)) {
    const auto* t = static_cast<const Translation*>(p);
    wchar_t key[64];
    ::swprintf(key, 64, L"\\StringFileInfo\\%04x%04x\\FileVersion", t->language, t->code_page);
    if (::VerQueryValueW(data.data(), key, &p, &len) && len > 1) {
      std::string text = win32::narrow({static_cast<const wchar_t*>(p), len - 1});
      if (!text.empty() && text != out) out += " (" + text + ")";
    }
  }
  return out;
}

void* DynamicLibrary::symbol(const char* symbol) const noexcept {
  if (handle_ == nullptr) return nullptr;
  return reinterpret_cast<void*>(::GetProcAddress(static_cast<HMODULE>(handle_), symbol));
}

}  // namespace dmlbits
