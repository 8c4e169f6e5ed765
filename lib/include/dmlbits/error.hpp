// Typed errors. The library reports every failure by throwing dmlbits::Error; it never prints
// and never exits. The application maps Error::code() to an exit status through exit_status().
#pragma once

#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace dmlbits {

// Error categories. Each has one exit status, documented in the man page (EXIT STATUS); the
// table in error.cpp is the single source for names, statuses and descriptions.
enum class Errc {
  mismatch,       // a result differed from its expected value (reserved for golden checks)
  usage,          // the command line is malformed
  invalid_input,  // an input is malformed or the operation is not valid at the feature level
  unsupported,    // valid, but the chosen backend cannot run it
  io,             // a file could not be read or written
  backend,        // a device or runtime call failed
  internal,       // a bug in dmlbits
  interrupted,    // SIGINT or SIGTERM arrived during the run
  broken_pipe,    // the reader of standard output or a FIFO went away (EPIPE): not an error
                  // to report, but the end of the run
};

struct ErrcInfo {
  Errc code;
  std::string_view name;
  int exit_status;
  std::string_view description;
};

// One row per Errc, in enum order.
std::span<const ErrcInfo> errc_table();
const ErrcInfo& errc_info(Errc code);
int exit_status(Errc code);

class Error : public std::runtime_error {
 public:
  Error(Errc code, std::string message) : std::runtime_error(std::move(message)), code_(code) {}
  Errc code() const noexcept { return code_; }

 private:
  Errc code_;
};

// Rethrows `e` with "context: " prepended to its message, keeping the code.
[[noreturn]] void rethrow_with_context(const Error& e, std::string_view context);

// Runs f(); an Error escaping it gets `context` prepended ("reading 'a.npy': ...").
template <class F>
decltype(auto) with_context(std::string_view context, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    rethrow_with_context(e, context);
  }
}

// Quotes a file name for messages: 'a.npy', and "standard input" for "-".
std::string quote_path(std::string_view path);

}  // namespace dmlbits
