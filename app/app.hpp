// The command-line front end: one options struct plus setup_<cmd>() and run_<cmd>() per
// command (CLI11's example style). Commands parse syntax, call the library and print through
// report.hpp; they throw dmlbits::Error and main() turns it into a message and an exit status.
#pragma once

#include <CLI/CLI.hpp>

#include "dmlbits/ops.hpp"
#include "dmlbits/option_error.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits::app {

// Counts (--show, --jobs): CLI11 would read "-1" into an unsigned option as a huge number.
inline CLI::Validator count_validator() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return !s.empty() && s[0] == '-' ? "'" + s + "' is not a count (0 or more)" : std::string();
      },
      "");
}

// Every command that prints in more than one format takes both spellings: --json, and
// --format json (operators: npy or json; ops, info, devices: text or json). Returns the format
// asked for ("" for the default); the two together must agree (Errc::usage otherwise).
std::string format_choice(bool json, const std::string& format);

// FILE options (-o, --time-json, --junit, ...): an empty value names no file and is refused,
// not taken for "not given".
inline CLI::Validator file_name_validator() {
  return CLI::Validator([](std::string& s) { return s.empty() ? std::string("an empty file name names no file") : std::string(); },
                        "");
}

// An option's refusal in the command line's words: its flag (--out-dtype). app/option_errors.cpp
std::string option_error_text(const OptionError& e);
// An option whose value the library's parser for its kind reads (options.hpp: `parse` calls it
// and keeps the value) as CLI11 reads the option; a refusal is an OptionError, which main() words.
CLI::Option* add_parsed_option(CLI::App& sub, const std::string& name, std::function<void(const std::string&)> parse,
                               const std::string& help);

// The last line of every command's help.
inline constexpr const char* kSeeManual = "See dmlbits(1) for details.";

// What --version prints: the version, the commit, the compiler and the backends built in.
std::string version_text();
// The commit the build was made from, written at build time (scripts/build-commit.cmake).
extern const char kBuildCommit[];

void setup_info(CLI::App& app);
void setup_ops(CLI::App& app);
void setup_check(CLI::App& app);
void setup_devices(CLI::App& app);
// `completion bash`: a completion script generated from `app`'s commands and the library's tables.
void setup_completion(CLI::App& app);
// One subcommand per row of the operator table.
// The operator commands, or only `only`'s when given (the command line names it first).
void setup_op_commands(CLI::App& app, const OpInfo* only = nullptr);

}  // namespace dmlbits::app
