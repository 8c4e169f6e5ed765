#include "dmlbits/error.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

namespace dmlbits {
namespace {

// Statuses follow cmp(1)/diff(1): 1 means "ran, and the data differ", 2 and up mean trouble.
constexpr std::array<ErrcInfo, 9> kErrcTable{{
    {Errc::mismatch, "mismatch", 1, "the result differs from the expected (golden) tensor"},
    {Errc::usage, "usage", 2, "the command line is malformed (unknown option, missing operand)"},
    {Errc::invalid_input, "invalid-input", 3,
     "an input is malformed, or the operation is not valid at the requested feature level"},
    {Errc::unsupported, "unsupported", 4, "the chosen backend cannot run this operation"},
    {Errc::io, "io", 5, "a file could not be opened, read or written"},
    {Errc::backend, "backend", 6, "a device or runtime call failed"},
    {Errc::internal, "internal", 70, "an internal error (a bug in dmlbits; please report it)"},
    {Errc::interrupted, "interrupted", 130, "interrupted by SIGINT or SIGTERM; no output file was left"},
    // 128 + SIGPIPE: what a shell reports for a tool that SIGPIPE ended, as it ends cat or seq
    // in `| head`; dmlbits exits with it itself so that it can remove its temporary files.
    {Errc::broken_pipe, "broken-pipe", 141, "the reader of the output went away (a closed pipe); nothing is printed"},
}};

}  // namespace

std::span<const ErrcInfo> errc_table() { return kErrcTable; }

const ErrcInfo& errc_info(Errc code) { return kErrcTable.at(static_cast<std::size_t>(code)); }

int exit_status(Errc code) { return errc_info(code).exit_status; }

void rethrow_with_context(const Error& e, std::string_view context) {
  // An option's refusal stays one, for the face to word (error.hpp).
  if (const auto* option = dynamic_cast<const OptionError*>(&e)) throw option->with_context(context);
  throw Error(e.code(), fmt::format("{}: {}", context, e.what()));
}

std::string quote_path(std::string_view path) {
  if (path == "-") return "standard input";
  // A control character (a newline above all) would break the one-line diagnostic, or move
  // the cursor on a terminal: written as C writes it ('a\nb.npy'), with the backslash doubled
  // in such a name so that the quoting can be read back.
  const bool plain =
      std::none_of(path.begin(), path.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (plain) return fmt::format("'{}'", path);
  std::string out = "'";
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\') out += "\\\\";
    else if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  return out + "'";
}

}  // namespace dmlbits
