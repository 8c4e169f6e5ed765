// The Win32 implementation of the standard streams of dmlbits/front_end.hpp and
// standard_streams.hpp. Standard output is written with WriteFile on its handle: bytes as they
// are (binary, never "\n" to "\r\n"), and the reason of a failure kept.
#include "dmlbits/front_end.hpp"
#include "standard_streams.hpp"

#include <algorithm>
#include <vector>

#include "win32.hpp"
// After windows.h, which it needs.
#include <shellapi.h>

namespace dmlbits {
namespace {

bool is_console(DWORD which) noexcept {
  DWORD mode = 0;
  const HANDLE h = ::GetStdHandle(which);
  return h != nullptr && h != INVALID_HANDLE_VALUE && ::GetConsoleMode(h, &mode) != 0;
}

}  // namespace

bool standard_output_is_terminal() noexcept { return is_console(STD_OUTPUT_HANDLE); }
bool standard_error_is_terminal() noexcept { return is_console(STD_ERROR_HANDLE); }

std::error_code write_standard_output(std::string_view data) noexcept {
  const HANDLE out = ::GetStdHandle(STD_OUTPUT_HANDLE);
  const char* p = data.data();
  const char* end = p + data.size();
  while (p < end) {
    const DWORD chunk = static_cast<DWORD>(std::min<std::size_t>(static_cast<std::size_t>(end - p), 1u << 30));
    DWORD written = 0;
    if (!::WriteFile(out, p, chunk, &written, nullptr)) return win32::error_code(::GetLastError());
    p += written;
  }
  return {};
}

std::vector<std::string> command_line_arguments(int argc, char** argv) {
  // main's argv is in the ANSI code page, which cannot hold every file name: the UTF-16
  // command line can.
  int n = 0;
  wchar_t** wide = ::CommandLineToArgvW(::GetCommandLineW(), &n);
  if (wide == nullptr) return {argv, argv + argc};
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) out.push_back(win32::narrow(wide[i]));
  ::LocalFree(wide);
  return out;
}

}  // namespace dmlbits
