// Cooperative interruption (dmlbits/error.hpp). The flag is process-wide and is never
// cleared, so every test that raises it does so in a death-test child (forked, or re-run with
// the threadsafe style), whose exit status says whether the child saw what it should; the
// parent process only checks that nothing is requested until someone asks.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "dmlbits/error.hpp"
#include "io.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

// Ends a death-test child: status 0 and "ok: <note>" when `ok`, else 1 and "failed: <note>".
[[noreturn]] void finish(bool ok, const std::string& note) {
  std::fprintf(stderr, "%s: %s\n", ok ? "ok" : "failed", note.c_str());
  std::fflush(stderr);
  std::_Exit(ok ? 0 : 1);
}

TEST(InterruptTest, NothingIsRequestedUntilSomeoneAsks) {
  EXPECT_FALSE(interrupt_requested());
  EXPECT_NO_THROW(throw_if_interrupted());
}

TEST(InterruptDeathTest, ARequestThrowsInterruptedAndStays) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        request_interrupt();
        bool ok = interrupt_requested();
        for (int round = 0; round < 2; ++round) {  // sticky: the second check throws too
          try {
            throw_if_interrupted();
            ok = false;
          } catch (const Error& e) {
            ok = ok && e.code() == Errc::interrupted && std::string(e.what()) == "interrupted";
          }
        }
        // 130 = 128 + SIGINT, as a shell reports a command SIGINT ended.
        finish(ok && exit_status(Errc::interrupted) == 130, "sticky");
      },
      ::testing::ExitedWithCode(0), "ok: sticky");
}

extern "C" void on_signal(int) { request_interrupt(); }

TEST(InterruptDeathTest, ASignalHandlerCanRequestIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        std::signal(SIGUSR1, on_signal);
        const bool before = interrupt_requested();
        std::raise(SIGUSR1);
        finish(!before && interrupt_requested(), "from a handler");
      },
      ::testing::ExitedWithCode(0), "ok: from a handler");
}

// The library's writers check between writes: an interrupted output is never committed, and
// its temporary file goes with the OutputFile.
TEST(InterruptDeathTest, AnInterruptedOutputLeavesNoFile) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        test::TempDir dir("interrupt-test");
        bool ok = false;
        {
          OutputFile out(dir.file("out.npy"));
          out.write(std::string_view("before"));
          request_interrupt();
          try {
            out.write(std::string_view("after"));
            out.commit();
          } catch (const Error& e) {
            ok = e.code() == Errc::interrupted;
          }
        }
        ok = ok && dir.names().empty();
        std::error_code ec;
        std::filesystem::remove_all(dir.path(), ec);
        finish(ok, "no file");
      },
      ::testing::ExitedWithCode(0), "ok: no file");
}

}  // namespace
}  // namespace dmlbits
