// The command-line front end, as CLI11's examples read: per command, an options struct, a
// setup_<cmd>() that declares its options and a run_<cmd>() that does the work. Commands parse
// syntax, call the library and print through report.hpp; they throw dmlbits::Error and main()
// turns it into a message and an exit status (exit_status_of_failure, main.cpp).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
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
  return CLI::Validator(
      [](std::string& s) { return s.empty() ? std::string("an empty file name names no file") : std::string(); }, "");
}

// An option's refusal in the command line's words: its flag (--out-dtype). app/option_errors.cpp
std::string option_error_text(const OptionError& e);
// The backends --adapter applies to, from the backend table: "d3d12, directml and auto".
std::string adapter_backends_text();
// An option whose value the library's parser for its kind reads (request.hpp: `parse` calls it
// and keeps the value) as CLI11 reads the option; a refusal is an OptionError, which main() words.
CLI::Option* add_parsed_option(CLI::App& sub, const std::string& name, std::function<void(const std::string&)> parse,
                               const std::string& help);

// The last line of every command's help.
inline constexpr const char* kSeeManual = "See dmlbits(1) for details.";

// What --version prints: the version, the commit, the compiler and the backends built in.
std::string version_text();
// The commit the build was made from, written at build time (scripts/build-commit.cmake).
extern const char kBuildCommit[];

// The options a command line names, so that a command sets up those alone: CLI11's set-up of
// an option (its names parsed twice, then compared with every option already added) was most of
// a small run's instructions (testdata/benchmarks.md, "A short main"). A long option counts as
// named when some word is --NAME or --NAME=VALUE; any word that can be short options (-v, -vq,
// -ofile; not -1, a literal) names every short option; help names every option.
class AskedOptions {
 public:
  // Every option: for help, and for completion, which lists them all.
  static AskedOptions every();
  // The words after the command.
  explicit AskedOptions(std::span<const std::string> words);
  // `names` as CLI11 takes them ("-o,--output"; a positional has no dash and is always wanted).
  bool wants(std::string_view names) const;

 private:
  AskedOptions() = default;
  bool every_ = false;
  bool short_options_ = false;
  std::vector<std::string> long_names_;
};

// A command being set up: its setup_<cmd>() declares every option as CLI11's examples do
// (sub->add_option(...)->check(...)); those the command line asked for are added to the
// command, the others to a stand-in that is never parsed (its count() is 0, as an option not
// given), so that the declarations read the same whatever was asked. An option that must be
// given must therefore be positional, which is always added.
class CommandSetup {
 public:
  CommandSetup(CLI::App& command, const AskedOptions& asked) : command_(command), asked_(asked) {}

  template <class T>
  CLI::Option* add_option(std::string names, T& variable, std::string description = "") {
    return asked_.wants(names) ? command_.add_option(std::move(names), variable, std::move(description)) : unused();
  }
  template <class T>
  CLI::Option* add_flag(std::string names, T& variable, std::string description = "") {
    return asked_.wants(names) ? command_.add_flag(std::move(names), variable, std::move(description)) : unused();
  }
  // add_parsed_option (above) on the command, when the command line names the option.
  CLI::Option* add_parsed_option(std::string names, std::function<void(const std::string&)> parse,
                                 const std::string& description) {
    return asked_.wants(names) ? app::add_parsed_option(command_, names, std::move(parse), description) : unused();
  }
  // The same with a description worded from the tables (formatted): worded only for an option
  // that is set up, so that a run does not format the help of options it was not given.
  CLI::Option* add_parsed_option(std::string names, std::function<void(const std::string&)> parse,
                                 const std::function<std::string()>& describe) {
    return asked_.wants(names) ? app::add_parsed_option(command_, names, std::move(parse), describe()) : unused();
  }
  // What the command runs once the command line is parsed.
  void final_callback(std::function<void()> run) { command_.final_callback(std::move(run)); }
  // The program's CLI11 app, with every command (completion lists them).
  CLI::App& root() { return *command_.get_parent(); }

 private:
  static CLI::Option* unused();
  CLI::App& command_;
  const AskedOptions& asked_;
};

// A command as main() registers it: the names and summary --help lists, and the set-up of its
// options, which only the command that runs (or every command, for completion) gets.
struct Command {
  std::string name;
  std::vector<std::string> aliases;  // other names it answers to (the operators' DirectML names)
  std::string description;
  std::function<void(CommandSetup*)> setup;
};

Command info_command();
Command ops_command();
Command check_command();
Command devices_command();
// `completion bash`: a completion script generated from the root's commands and the library's tables.
Command completion_command();
// One command per row of the operator table.
Command op_command(const OpInfo& op);
// `dmlbits eval EXPRESSION NAME=INPUT...`: the operator commands' options for an expression.
Command eval_command();

}  // namespace dmlbits::app
