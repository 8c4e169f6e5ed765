// Signals and threads: the library's own threads leave signals to the thread that installed
// the handlers (install_interrupt_handlers in dmlbits/front_end.hpp).
#pragma once

namespace dmlbits {

// Blocks every signal in the calling thread, so that SIGINT, SIGTERM and SIGPIPE reach the
// main thread only, as in a process with one thread: call it first thing in a worker thread.
// (A no-op where signals are not delivered to threads, as on Windows.)
void keep_signals_off_this_thread() noexcept;

}  // namespace dmlbits
