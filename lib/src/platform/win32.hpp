// What the Win32 implementations of the platform layer share (*_win32.cpp; never included
// elsewhere: <windows.h> stays inside lib/src/platform). Strings are UTF-8 everywhere in
// dmlbits; Windows' file and environment APIs are called in their wide (UTF-16) forms, so that
// names outside the ANSI code page work.
#pragma once

#ifndef NOMINMAX
#define NOMINMAX
#endif
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#include <windows.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <system_error>

namespace dmlbits::win32 {

// UTF-8 to UTF-16 and back. Invalid sequences become U+FFFD, as Windows converts them.
inline std::wstring widen(std::string_view s) {
  if (s.empty()) return {};
  const int n = ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0);
  std::wstring out(static_cast<std::size_t>(n), L'\0');
  ::MultiByteToWideChar(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), out.data(), n);
  return out;
}

inline std::string narrow(std::wstring_view s) {
  if (s.empty()) return {};
  const int n = ::WideCharToMultiByte(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), nullptr, 0, nullptr, nullptr);
  std::string out(static_cast<std::size_t>(n), '\0');
  ::WideCharToMultiByte(CP_UTF8, 0, s.data(), static_cast<int>(s.size()), out.data(), n, nullptr, nullptr);
  return out;
}

// A Win32 error as the error the POSIX build reports for the same failure, where there is one:
// callers compare with std::errc (broken_pipe above all) and the messages then read the same on
// both systems ("No such file or directory"). Others keep Windows' own code and text.
inline std::error_code error_code(DWORD error) {
  switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_DRIVE:
    case ERROR_BAD_NETPATH:
      return std::make_error_code(std::errc::no_such_file_or_directory);
    case ERROR_ACCESS_DENIED:
    case ERROR_WRITE_PROTECT:
      return std::make_error_code(std::errc::permission_denied);
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
      return std::make_error_code(std::errc::device_or_resource_busy);
    case ERROR_BROKEN_PIPE:
    case ERROR_NO_DATA:             // "the pipe is being closed": the reader went away
    case ERROR_PIPE_NOT_CONNECTED:  // wine's word for the same (a Unix pipe's EPIPE)
      return std::make_error_code(std::errc::broken_pipe);
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
      return std::make_error_code(std::errc::no_space_on_device);
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
      return std::make_error_code(std::errc::file_exists);
    case ERROR_DIRECTORY:
      return std::make_error_code(std::errc::not_a_directory);
    case ERROR_INVALID_NAME:
    case ERROR_INVALID_PARAMETER:
      return std::make_error_code(std::errc::invalid_argument);
    case ERROR_FILENAME_EXCED_RANGE:
      return std::make_error_code(std::errc::filename_too_long);
    case ERROR_NOT_ENOUGH_MEMORY:
    case ERROR_OUTOFMEMORY:
      return std::make_error_code(std::errc::not_enough_memory);
    default:
      return {static_cast<int>(error), std::system_category()};
  }
}

[[noreturn]] inline void throw_last_error(const char* what = "") {
  throw std::system_error(error_code(::GetLastError()), what);
}

// File handles in the int that files.hpp keeps: Windows handles have 32 significant bits (so
// that 32- and 64-bit processes can share them) and are sign-extended back, as Windows'
// HandleToLong and LongToHandle do; INVALID_HANDLE_VALUE becomes -1, files.hpp's "no file".
inline int handle_to_int(HANDLE h) { return static_cast<int>(reinterpret_cast<std::intptr_t>(h)); }
inline HANDLE int_to_handle(int h) { return reinterpret_cast<HANDLE>(static_cast<std::intptr_t>(h)); }

}  // namespace dmlbits::win32
