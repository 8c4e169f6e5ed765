// dmlbits/front_end.hpp (and standard_streams.hpp): writing standard output with the
// failure's reason kept (a closed pipe, a full disk), and whether the streams are terminals. Each test that moves
// standard output runs in a child process (a death test), away from the test's own output.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <system_error>

#include "dmlbits/front_end.hpp"
#include "standard_streams.hpp"

namespace dmlbits {
namespace {

TEST(StandardStreamsTest, WritesEverythingToStandardOutput) {
  EXPECT_EXIT(
      {
        int fds[2];
        if (::pipe(fds) != 0) std::_Exit(2);
        ::dup2(fds[1], STDOUT_FILENO);
        const std::string text(1000, 'x');
        if (write_standard_output(text)) std::_Exit(3);
        if (standard_output_is_terminal()) std::_Exit(4);  // a pipe
        char buf[2000];
        if (::read(fds[0], buf, sizeof buf) != 1000) std::_Exit(5);
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(StandardStreamsTest, AClosedPipeIsBrokenPipe) {
  EXPECT_EXIT(
      {
        ::signal(SIGPIPE, SIG_IGN);
        int fds[2];
        if (::pipe(fds) != 0) std::_Exit(2);
        ::dup2(fds[1], STDOUT_FILENO);
        ::close(fds[0]);
        const std::error_code e = write_standard_output("x");
        std::_Exit(e == std::errc::broken_pipe ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(StandardStreamsTest, AFullDiskSaysSo) {
  EXPECT_EXIT(
      {
        const int full = ::open("/dev/full", O_WRONLY);
        if (full < 0) std::_Exit(0);  // no /dev/full here: nothing to check
        ::dup2(full, STDOUT_FILENO);
        const std::error_code e = write_standard_output("x");
        std::_Exit(e.message() == "No space left on device" ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(StandardStreamsTest, AFileIsNoTerminal) {
  EXPECT_EXIT(
      {
        const int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDERR_FILENO);
        std::_Exit(standard_error_is_terminal() ? 3 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace dmlbits
