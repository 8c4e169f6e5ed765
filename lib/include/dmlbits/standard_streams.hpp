// What the application needs to know of, and do with, its standard streams without calling the
// operating system itself (the platform layer does: lib/src/platform/standard_streams.cpp).
#pragma once

#include <cstddef>
#include <string_view>
#include <string>
#include <system_error>
#include <vector>

namespace dmlbits {

// Whether standard output or standard error is a terminal: binary .npy is not written to one,
// and a progress line is shown only on one.
bool standard_output_is_terminal() noexcept;
bool standard_error_is_terminal() noexcept;

// Writes all of `data` to standard output, retrying interrupted writes, and returns the first
// failure (empty on success): a reader that closed its pipe compares equal to
// std::errc::broken_pipe; anything else is an I/O error whose message() says why. Bypasses
// the C and C++ libraries' buffers, so that the failure's reason is not lost.
std::error_code write_standard_output(std::string_view data) noexcept;

// The program's arguments as UTF-8, argv[0] first. On POSIX, main's own; on Windows, the
// command line as the system keeps it (UTF-16), converted, since main's argv holds only what
// the ANSI code page can spell (a file name in another script arrives as '?').
std::vector<std::string> command_line_arguments(int argc, char** argv);

}  // namespace dmlbits
