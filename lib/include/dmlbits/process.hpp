// Cooperative interruption. A program's SIGINT/SIGTERM handler calls request_interrupt()
// (async-signal-safe; the dmlbits command's: install_interrupt_handlers, dmlbits/front_end.hpp);
// long loops in the library call throw_if_interrupted() between chunks, so an interrupted run
// unwinds normally: temporary output files are removed and nothing partial is left behind.
#pragma once

namespace dmlbits {

void request_interrupt() noexcept;
bool interrupt_requested() noexcept;
// Throws Error(Errc::interrupted) once an interrupt was requested.
void throw_if_interrupted();

}  // namespace dmlbits

