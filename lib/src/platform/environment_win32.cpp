// The Win32 implementation of environment.hpp: the process environment in its wide form, so
// that values outside the ANSI code page arrive as UTF-8, and a default set here is seen by
// DLLs loaded later (which read it with GetEnvironmentVariable, not the C runtime's copy).
#include "environment.hpp"

#include "win32.hpp"

namespace dmlbits {

std::optional<std::string> environment_variable(const std::string& name) {
  const std::wstring wname = win32::widen(name);
  ::SetLastError(ERROR_SUCCESS);
  DWORD n = ::GetEnvironmentVariableW(wname.c_str(), nullptr, 0);
  if (n == 0) {
    if (::GetLastError() == ERROR_ENVVAR_NOT_FOUND) return std::nullopt;
    return std::string();
  }
  std::wstring value(n, L'\0');
  n = ::GetEnvironmentVariableW(wname.c_str(), value.data(), n);
  value.resize(n);
  return win32::narrow(value);
}

// (Each name read as environment_variable reads it, in its wide form: the C runtime's narrow
// block is in the ANSI code page, and values set with SetEnvironmentVariableW are not in it.)
bool environment_has(std::span<const std::string_view> names, std::span<const std::optional<std::string>> values) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (environment_variable(std::string(names[i])) != values[i]) return false;
  return true;
}

void set_environment_default(const std::string& name, const std::string& value) {
  if (environment_variable(name)) return;
  ::SetEnvironmentVariableW(win32::widen(name).c_str(), win32::widen(value).c_str());
}

}  // namespace dmlbits
