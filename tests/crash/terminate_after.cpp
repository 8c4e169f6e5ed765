// Test-only tool of the Windows build (tests/crash/kill_test.py under wine, issue #28): runs a
// program and ends it with TerminateProcess after a delay, as Task Manager's "End task", a
// CI runner's timeout or `taskkill /F` do on Windows: the process gets no chance to clean up.
//
//   terminate_after.exe MILLISECONDS PROGRAM [ARGUMENTS...]
//
// PROGRAM inherits the standard handles and the current folder. MILLISECONDS < 0 never
// terminates it. Exits with PROGRAM's exit status (its low 8 bits, as wine hands a status to
// Linux), or 222 when it was terminated (PROGRAM's own status then is kTerminated, which
// dmlbits never uses); writes "terminate_after: started" on standard error as soon as PROGRAM
// is created (so that a harness can tell a wine that never ran this tool, or never got as far
// as PROGRAM, from a run that happened) and "terminate_after: ran N ms" (CreateProcessW to its
// end) last. A program that ended between the timeout and TerminateProcess counts as
// ended, not terminated.
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <shellapi.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

constexpr UINT kTerminated = 0xDEAD;
constexpr int kTerminatedStatus = 222;

// One argument quoted as CommandLineToArgvW and the C runtime read it back.
std::wstring quoted(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
  std::wstring out = L"\"";
  std::size_t backslashes = 0;
  for (const wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    out.append(c == L'"' ? 2 * backslashes + 1 : backslashes, L'\\');
    backslashes = 0;
    out += c;
  }
  out.append(2 * backslashes, L'\\');
  return out + L"\"";
}

}  // namespace

int main() {
  int argc = 0;
  wchar_t** argv = ::CommandLineToArgvW(::GetCommandLineW(), &argc);
  if (argv == nullptr || argc < 3) {
    std::fprintf(stderr, "usage: terminate_after MILLISECONDS PROGRAM [ARGUMENTS...]\n");
    return 2;
  }
  const long delay = std::wcstol(argv[1], nullptr, 10);
  std::wstring command;
  for (int i = 2; i < argc; ++i) command += (i > 2 ? L" " : L"") + quoted(argv[i]);

  STARTUPINFOW si{};
  si.cb = sizeof si;
  si.dwFlags = STARTF_USESTDHANDLES;
  si.hStdInput = ::GetStdHandle(STD_INPUT_HANDLE);
  si.hStdOutput = ::GetStdHandle(STD_OUTPUT_HANDLE);
  si.hStdError = ::GetStdHandle(STD_ERROR_HANDLE);
  PROCESS_INFORMATION pi{};
  LARGE_INTEGER frequency{}, start{}, end{};
  ::QueryPerformanceFrequency(&frequency);
  if (!::CreateProcessW(nullptr, command.data(), nullptr, nullptr, TRUE, 0, nullptr, nullptr, &si, &pi)) {
    std::fprintf(stderr, "terminate_after: cannot start the program (error %lu)\n", ::GetLastError());
    return 2;
  }
  ::QueryPerformanceCounter(&start);
  std::fprintf(stderr, "terminate_after: started\n");
  std::fflush(stderr);
  if (delay >= 0 && ::WaitForSingleObject(pi.hProcess, static_cast<DWORD>(delay)) == WAIT_TIMEOUT)
    ::TerminateProcess(pi.hProcess, kTerminated);  // fails harmlessly if it ended meanwhile
  ::WaitForSingleObject(pi.hProcess, INFINITE);
  ::QueryPerformanceCounter(&end);
  DWORD status = 0;
  ::GetExitCodeProcess(pi.hProcess, &status);
  std::fprintf(stderr, "terminate_after: ran %.1f ms\n",
               1000.0 * static_cast<double>(end.QuadPart - start.QuadPart) / static_cast<double>(frequency.QuadPart));
  return status == kTerminated ? kTerminatedStatus : static_cast<int>(status & 0xff);
}
