// The platform layer's signals (signals.hpp, and install_interrupt_handlers in
// dmlbits/front_end.hpp): SIGPIPE ignored, SIGINT turned into an interrupt request, and worker
// threads that leave signals to the main thread. The handlers are process-wide: each test
// runs in a child process of its own (a death test), so the test binary's own signals stay.
#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "signals.hpp"

namespace dmlbits {
namespace {

TEST(SignalsTest, SigintRequestsAnInterruptAndSigpipeIsIgnored) {
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        std::raise(SIGPIPE);  // ignored: the process goes on
        if (interrupt_requested()) std::_Exit(2);
        std::raise(SIGINT);
        if (!interrupt_requested()) std::_Exit(3);
        try {
          throw_if_interrupted();
          std::_Exit(4);
        } catch (const Error& e) {
          if (e.code() != Errc::interrupted) std::_Exit(5);
        }
        std::raise(SIGINT);  // a second one ends the process at once
        std::_Exit(6);
      },
      ::testing::KilledBySignal(SIGINT), "");
}

TEST(SignalsTest, WorkerThreadsLeaveSignalsToTheMainThread) {
  bool all_blocked = true;
  std::thread worker([&] {
    keep_signals_off_this_thread();
    sigset_t mask;
    sigemptyset(&mask);
    pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    for (int sig : {SIGINT, SIGTERM, SIGPIPE}) all_blocked = all_blocked && sigismember(&mask, sig) == 1;
  });
  worker.join();
  EXPECT_TRUE(all_blocked);
  sigset_t mine;
  sigemptyset(&mine);
  pthread_sigmask(SIG_BLOCK, nullptr, &mine);
  EXPECT_EQ(sigismember(&mine, SIGINT), 0);  // the calling thread is untouched
}

}  // namespace
}  // namespace dmlbits
