// Cooperative interruption. The application's SIGINT/SIGTERM handler calls request_interrupt()
// (async-signal-safe); long loops in the library call throw_if_interrupted() between chunks,
// so an interrupted run unwinds normally: temporary output files are removed and nothing
// partial is left behind.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace dmlbits {

// For main(), once, before any thread starts: SIGINT and SIGTERM call request_interrupt(), and
// a second one ends the process at once; SIGPIPE is ignored, so that a reader that closed its
// pipe (`| head`) is seen as an error from the write (std::errc::broken_pipe), after which
// dmlbits removes its temporary files and exits 141 quietly, as a tool ended by SIGPIPE would.
// (lib/src/platform/signals.cpp; a Windows build installs a console control handler.)
void install_interrupt_handlers();

void request_interrupt() noexcept;
bool interrupt_requested() noexcept;
// Throws Error(Errc::interrupted) once an interrupt was requested.
void throw_if_interrupted();

}  // namespace dmlbits


// What the application needs to know of, and do with, its standard streams without calling the
// operating system itself (the platform layer does: lib/src/platform/standard_streams.cpp).
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
