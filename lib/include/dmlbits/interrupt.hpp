// Cooperative interruption. The application's SIGINT/SIGTERM handler calls request_interrupt()
// (async-signal-safe); long loops in the library call throw_if_interrupted() between chunks,
// so an interrupted run unwinds normally: temporary output files are removed and nothing
// partial is left behind.
#pragma once

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
