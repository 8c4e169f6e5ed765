// Typed errors. The library reports every failure by throwing dmlbits::Error; it never prints
// and never exits. The application maps Error::code() to an exit status through exit_status().
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

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

// Sizes in bytes as people read them, for messages and listings (lib/src/core/byte_size.cpp):
// one formatter, so that every message says "64 MiB" the same way. "0 bytes", "1 byte", "1023
// bytes", "1 KiB", "64 MiB", "10 GiB": a whole number of the largest binary unit that fits.
// Otherwise one decimal, followed by the exact count when `with_exact_count` (so that 64 MiB
// and one byte is not "64 MiB"): "1.5 KiB (1536 bytes)"; without it, "7.8 GiB" (for quantities
// such as a device's memory, where the bytes are noise).
std::string format_byte_size(std::uint64_t bytes, bool with_exact_count = true);

// ---- Refused options ---------------------------------------------------------------------
// A refused option value as data: which option, which rule, the value given. The library
// throws an OptionError and never spells an option as a face does: each face (the command line
// in app/, `check` manifests in lib/src/golden/check.cpp, the Python module) renders it in its
// own spelling (--out-dtype, "out_dtype", out_dtype=) through option_error_text(). The parsers
// that throw it, one per kind of value, are in request.hpp. what() is the sentence in the
// library's own words, the keywords of OperationRequest's fields (threads, out_dtype), for a
// caller with no spelling of its own.

// The options the faces offer, by meaning.
enum class OptionKey : std::uint8_t {
  backend,
  dtype,
  out_dtype,
  feature_level,
  shift_overflow,
  isa,
  adapter,
  threads,
  repeat,
  warmup,
  in_place,
  output,           // an output file (the command line's -o)
  out,              // an output buffer (OutputKind::buffer: Python's out=)
  format,           // an output file's format (OperationRequest::format)
  emit_dxdispatch,  // the DxDispatch model's file (dxdispatch_file_names)
  shard,            // `check`'s share of the cases (CheckOptions::shard_index and shard_count)
};
// The option's keyword: OperationRequest's field, Python's keyword, a manifest's key ("out_dtype").
std::string_view option_keyword(OptionKey key);

enum class OptionRule : std::uint8_t {
  unknown_name,      // not a name of the option's table; choices() are the names
  not_a_count,       // threads as text: not a whole number from 1 to subject()
  zero,              // threads: 0 (subject(): the most, kMaxThreads)
  above_maximum,     // threads: more than subject()
  empty,             // adapter: an empty name; output: an empty file name
  too_few,           // repeat below 1 or warmup below 0 (one rule for the two)
  no_such_adapter,   // adapter: an index or name part that matches no adapter; choices() are the adapters
  ambiguous,         // adapter: part of subject() adapters' names; choices() are the adapters
  applies_to_none,   // adapter given to `check` without a backend, and no case of subject() (a manifest's
                     // quoted path, or "the manifests") runs on a backend that takes one; choices() are those
  not_for_backend,   // isa, threads or adapter given to the backend subject(), which has no such choice;
                     // for adapter, choices() are the backends that take one
  not_for_operator,  // out_dtype or shift_overflow given to the operator subject(); choices() are the
                     // operators that take it
  not_offered,       // in_place: DirectML does not let subject()'s output alias its input
  runs_once,         // in_place with repeat or warmup
  with_output,       // in_place with an output file (output)
  read_only,         // in_place: operand A is read-only memory
  wrong_dtype,       // out: of dtype value(), where the result is subject()
  wrong_shape,       // out: of shape value(), where the result has shape subject()
  needed,            // dtype: no operand names one (subject(): where it was needed: "operand", "json")
  not_for_golden,    // dtype: a golden file names none, and the option gives inputs theirs, never a golden's
  needs_file,        // in_place: operand A is not a file (value() is what it is)
  no_file_name,      // emit_dxdispatch: "-" or empty (value()), where files are written; or a name value()
                     // that names no file ("dir/") when subject() is "named"
  cannot_tell,       // format: the output file value()'s name says no format
  binary_terminal,   // format: npy (binary) to standard output, which is a terminal
  not_backend_rule,  // shift_overflow: mode value() is not the rule of the backend subject(), which runs
                     // choices()'s only (Errc::unsupported)
  out_of_range,      // shard: "K/N" (value()) where K is not below N, or N is 0
};

class OptionError : public Error {
 public:
  // `code` is Errc::usage but for `needed`, which is the input's fault (Errc::invalid_input).
  OptionError(OptionKey key, OptionRule rule, std::string value = {}, std::string subject = {},
              std::vector<std::string> choices = {}, Errc code = Errc::usage);

  OptionKey key() const noexcept { return key_; }
  OptionRule rule() const noexcept { return rule_; }
  const std::string& value() const noexcept { return value_; }  // as given ("gpu", "300"), or ""
  const std::string& subject() const noexcept { return subject_; }
  const std::vector<std::string>& choices() const noexcept { return choices_; }
  // What the refusal happened in, outermost first, as rethrow_with_context() adds it:
  // "reading 'a.json'". A face puts it before its sentence.
  const std::string& context() const noexcept { return context_; }
  OptionError with_context(std::string_view context) const;

 private:
  OptionKey key_;
  OptionRule rule_;
  std::string value_, subject_;
  std::vector<std::string> choices_;
  std::string context_;
};

// How a face spells options in its messages.
struct OptionSpelling {
  std::string (*name)(OptionKey key);      // the option itself: --threads, threads, "threads"
  std::string (*argument)(OptionKey key);  // the option as a thing given: --threads, threads=, "threads"
  char quote = '\'';                       // around a value given: 'gpu', "gpu"
};
// The library's own spelling, what() uses: the keywords, as name and as argument.
OptionSpelling keyword_spelling();

// e's sentence (after its context) with the options spelt as `spelling` spells them. Each face's
// renderer calls it; the sentences are the same in every face but for the options' names.
std::string option_error_text(const OptionError& e, const OptionSpelling& spelling);

// ---- Interruption --------------------------------------------------------------------------
// Cooperative interruption. A program's SIGINT/SIGTERM handler calls request_interrupt()
// (async-signal-safe; the dmlbits command's: install_interrupt_handlers, dmlbits/front_end.hpp);
// long loops in the library call throw_if_interrupted() between chunks, so an interrupted run
// unwinds normally: temporary output files are removed and nothing partial is left behind.
void request_interrupt() noexcept;
bool interrupt_requested() noexcept;
// Throws Error(Errc::interrupted) once an interrupt was requested.
void throw_if_interrupted();

}  // namespace dmlbits
