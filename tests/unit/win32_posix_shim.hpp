// The few POSIX calls the unit tests use to set up their cases (not to test the library) done
// with the Windows C runtime, so that the same tests build for Windows. Force-included
// (-include) into the Windows build of the unit tests only (tests/CMakeLists.txt); the Linux
// build never sees it. Not a test: only unit/*_test.cpp are globbed.
#pragma once
#ifdef _WIN32

#include <direct.h>
#include <fcntl.h>
#include <io.h>
#include <stdlib.h>

#include <cstddef>

// The library reads the environment with GetEnvironmentVariableW (environment_win32.cpp), which
// the C runtime's _putenv_s updates too except for empty values (_putenv_s(name, "") removes
// the variable): the process environment is set directly as well. Declared here rather than
// from <windows.h>, whose macros (min, max, ERROR) the tests must not get.
extern "C" __declspec(dllimport) int __stdcall SetEnvironmentVariableA(const char* name, const char* value);

inline int setenv(const char* name, const char* value, int overwrite) {
  if (!overwrite && ::getenv(name) != nullptr) return 0;
  if (*value != '\0') ::_putenv_s(name, value);
  return SetEnvironmentVariableA(name, value) ? 0 : -1;
}

inline int unsetenv(const char* name) {
  ::_putenv_s(name, "");
  return SetEnvironmentVariableA(name, nullptr) ? 0 : 0;
}

inline char* mkdtemp(char* tmpl) {
  std::size_t n = 0;
  while (tmpl[n] != '\0') ++n;
  if (::_mktemp_s(tmpl, n + 1) != 0 || ::_mkdir(tmpl) != 0) return nullptr;
  return tmpl;
}

// POSIX's write takes a size_t; the C runtime's an unsigned int (the tests' chunks are small).
inline long long write(int fd, const void* data, std::size_t n) { return ::_write(fd, data, static_cast<unsigned>(n)); }

// Binary: the tests send .npy bytes through it.
inline int pipe(int fds[2]) { return ::_pipe(fds, 1 << 20, _O_BINARY); }

#endif  // _WIN32
