// The POSIX implementation of the standard streams of dmlbits/front_end.hpp and standard_streams.hpp.
#include "dmlbits/front_end.hpp"
#include "standard_streams.hpp"

#include <unistd.h>

#include <cerrno>

namespace dmlbits {

bool standard_output_is_terminal() noexcept { return ::isatty(STDOUT_FILENO) == 1; }
bool standard_error_is_terminal() noexcept { return ::isatty(STDERR_FILENO) == 1; }

std::error_code write_standard_output(std::string_view data) noexcept {
  const char* p = data.data();
  const char* end = p + data.size();
  while (p < end) {
    const ssize_t n = ::write(STDOUT_FILENO, p, static_cast<std::size_t>(end - p));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return {errno, std::generic_category()};
    p += n;
  }
  return {};
}

std::vector<std::string> command_line_arguments(int argc, char** argv) { return {argv, argv + argc}; }

}  // namespace dmlbits
