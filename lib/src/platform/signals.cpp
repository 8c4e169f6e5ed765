// The POSIX implementation of install_interrupt_handlers (dmlbits/front_end.hpp) and
// signals.hpp.
#include "signals.hpp"

#include <pthread.h>
#include <signal.h>

#include <csignal>

#include "dmlbits/front_end.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

// SIGINT/SIGTERM: ask the library to stop at its next chunk, which unwinds and removes any
// temporary output; a second signal ends the process at once.
void on_interrupt(int sig) {
  request_interrupt();
  std::signal(sig, SIG_DFL);
}

}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  // A closed pipe is seen as EPIPE from write(2), not as a signal.
  std::signal(SIGPIPE, SIG_IGN);
}

void keep_signals_off_this_thread() noexcept {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
}

}  // namespace dmlbits
