// The Win32 implementation of install_interrupt_handlers (dmlbits/front_end.hpp) and
// signals.hpp: Ctrl-C, Ctrl-Break and closing the console arrive through a console control
// handler, which Windows runs in a thread of its own.
#include <atomic>

#include "dmlbits/front_end.hpp"
#include "dmlbits/error.hpp"
#include "signals.hpp"
#include "win32.hpp"

namespace dmlbits {
namespace {

std::atomic<int> g_requests{0};

// The first event asks the library to stop at its next chunk, which unwinds and removes any
// temporary output (exit 130, as after SIGINT); a second one is left to Windows' default
// handler, which ends the process at once, as a second SIGINT does on Linux. A console being
// closed or a log-off ends the process when the handler returns, so it is only a request too.
BOOL WINAPI on_console_event(DWORD event) {
  switch (event) {
    case CTRL_C_EVENT:
    case CTRL_BREAK_EVENT:
    case CTRL_CLOSE_EVENT:
      if (g_requests.fetch_add(1) > 0) return FALSE;
      request_interrupt();
      return TRUE;
    default:
      return FALSE;
  }
}

}  // namespace

void install_interrupt_handlers() {
  ::SetConsoleCtrlHandler(on_console_event, TRUE);
  // No SIGPIPE on Windows: a write to a pipe whose reader went away fails with
  // ERROR_NO_DATA or ERROR_BROKEN_PIPE, which the file layer reports as broken_pipe.
}

// Windows delivers no signals to threads.
void keep_signals_off_this_thread() noexcept {}

}  // namespace dmlbits
