// dmlbits: DirectML's element-wise bitwise operators on tensors, from the command line.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <streambuf>
#include <string>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/devices.hpp"
#include "dmlbits/request.hpp"
#include "report.hpp"

namespace {

// Standard output for std::cout, written with write_standard_output so that the first
// failure's reason is kept: iostreams only set badbit, and by the time main() flushes, errno
// says nothing. A closed pipe must be told apart from a full disk, which is reported with its
// reason.
class StdoutBuf : public std::streambuf {
 public:
  StdoutBuf() { setp(buffer_, buffer_ + sizeof buffer_); }
  std::error_code error() const { return error_; }

 protected:
  int_type overflow(int_type c) override {
    if (!flush_buffer()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return flush_buffer() ? 0 : -1; }

 private:
  bool flush_buffer() {
    if (!error_) error_ = dmlbits::write_standard_output({pbase(), static_cast<std::size_t>(pptr() - pbase())});
    setp(buffer_, buffer_ + sizeof buffer_);
    return !error_;
  }
  char buffer_[1 << 16];
  std::error_code error_;
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

constexpr const char* kOtherCommands[] = {"eval", "info", "ops", "check", "devices", "completion"};

// The command a first argument means, if it is one in any case (`AND`, `Bit_Xor`): DirectML's
// names are written in capitals and a user should not have to remember ours are lower case.
std::optional<std::string> command_named(std::string_view arg) {
  const std::string l = lower(arg);
  for (const char* c : kOtherCommands)
    if (l == c) return std::string(c);
  for (const auto& op : dmlbits::op_table()) {
    if (l == op.verb) return std::string(op.verb);
    for (const auto& alias : op.aliases())
      if (l == lower(alias)) return std::string(op.verb);
  }
  return std::nullopt;
}

// The command nearest to a mistyped one, if any is near enough to be a likely typo.
std::string nearest_command(std::string_view arg) {
  const std::string l = lower(arg);
  std::string best;
  // Edit distance, doubled, plus one where the first letter differs: of `or` and `xor`, both
  // one edit from `xr`, the one that starts alike is the likelier typo.
  std::size_t best_score = 2 * (std::max<std::size_t>(2, l.size() / 3) + 1);
  const auto consider = [&](std::string_view name, std::string_view command) {
    const std::string n = lower(name);
    const std::size_t score = 2 * dmlbits::edit_distance(l, n) + (!l.empty() && !n.empty() && l[0] != n[0] ? 1 : 0);
    if (score < best_score) {
      best_score = score;
      best = command;
    }
  };
  for (const char* c : kOtherCommands) consider(c, c);
  for (const auto& op : dmlbits::op_table()) {
    consider(op.verb, op.verb);
    for (const auto& alias : op.aliases()) consider(alias, op.verb);
  }
  consider("help", "help");
  return best;
}

// The command a parse was in (the subcommand CLI11 selected), or "" before any.
std::string current_command(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) return sub->get_name();
  return {};
}

// A usage error in the house style: "dmlbits: COMMAND: what is wrong; see dmlbits COMMAND --help".
int usage_error(const std::string& command, const std::string& what) {
  const std::string where = command.empty() ? std::string() : command + ": ";
  const std::string help = command.empty() ? "dmlbits --help" : "dmlbits " + command + " --help";
  // A message of several lines (an expression with a caret under its column) keeps its last
  // line for the caret: the pointer to the help goes on a line of its own.
  if (what.find('\n') != std::string::npos)
    std::cerr << "dmlbits: " << where << what << "\ndmlbits: see " << help << '\n';
  else std::cerr << "dmlbits: " << where << what << "; see " << help << '\n';
  return dmlbits::exit_status(dmlbits::Errc::usage);
}

// A word of the command line quoted in a message: enough of it to recognise, as literals are
// quoted ("--aaaa... (5000 characters)"), so that a pasted blob does not fill the terminal.
std::string cut(const std::string& word) {
  if (word.size() <= 40) return word;
  return fmt::format("{}... ({} characters)", word.substr(0, 32), word.size());
}

// CLI11's message for a parse error, reworded: CLI11 writes "The following arguments were not
// expected: uint32 --out-dtype" (in reverse order), "B is required", "Could not convert: --jobs
// = -1"; dmlbits says what is wrong in its own words.
std::string parse_error_text(const CLI::ParseError& e) {
  std::string what = e.what();
  const auto after_colon = [&] { return what.substr(what.find(": ") + 2); };
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    std::vector<std::string> words;
    std::string rest = after_colon();
    for (std::size_t pos = 0; pos < rest.size();) {
      const std::size_t space = rest.find(' ', pos);
      words.insert(words.begin(), rest.substr(pos, space - pos));  // CLI11 lists them last first
      pos = space == std::string::npos ? rest.size() : space + 1;
    }
    if (words.empty()) return "unexpected arguments";
    const std::string& first = words.front();
    if (first.size() > 1 && first[0] == '-' && !(first[1] >= '0' && first[1] <= '9'))
      return fmt::format("unknown option '{}'", cut(first.substr(0, first.find('='))));
    for (auto& w : words) w = cut(w);
    return words.size() == 1 ? fmt::format("unexpected argument '{}'", words.front())
                             : fmt::format("unexpected arguments '{}'", fmt::join(words, "' '"));
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    if (what.starts_with("A subcommand")) return "a command is required";
    if (const auto is = what.find(" is required"); is != std::string::npos) {
      const std::string name = what.substr(0, is);
      if (name.starts_with("-")) return fmt::format("{} is required", name);
      return fmt::format("missing operand {}",
                         name == "files" || name == "manifests" ? name.substr(0, name.size() - 1) : name);
    }
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) && what.starts_with("Could not convert: ")) {
    const std::string rest = what.substr(std::strlen("Could not convert: "));
    const auto eq = rest.find(" = ");
    if (eq != std::string::npos)
      return fmt::format("{}: '{}' is not a valid value", rest.substr(0, eq), rest.substr(eq + 3));
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e)) {
    const auto colon = what.find(": ");
    if (colon != std::string::npos && what.find("At Most") != std::string::npos)
      return fmt::format("{} may be given once", what.substr(0, colon));
    if (colon != std::string::npos && (what.find("required but received 0") != std::string::npos ||
                                       (what.find(" required ") != std::string::npos && what.ends_with(" missing"))))
      return fmt::format("{} needs a value", what.substr(0, colon));
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e)) {
    // "--threads: Value 0 not in range 1 to 256" -> "--threads: 0 is not in range 1 to 256"
    const auto colon = what.find(": ");
    if (colon != std::string::npos) {
      std::string msg = what.substr(colon + 2);
      if (msg.starts_with("Value ")) {
        msg = msg.substr(6);
        const auto sp = msg.find(" not ");
        if (sp != std::string::npos) msg = fmt::format("'{}' is not {}", msg.substr(0, sp), msg.substr(sp + 5));
      }
      return fmt::format("{}: {}", what.substr(0, colon), msg);
    }
  }
  if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  return what;
}

}  // namespace

namespace dmlbits::app {

AskedOptions AskedOptions::every() {
  AskedOptions asked;
  asked.every_ = true;
  return asked;
}

AskedOptions::AskedOptions(std::span<const std::string> words) {
  for (const std::string& w : words) {
    if (w == "--") break;  // the rest are operands
    if (w.starts_with("--")) {
      if (w == "--help") every_ = true;
      long_names_.push_back(w.substr(2, w.find('=') - 2));
    } else if (w.size() >= 2 && w[0] == '-' && !(w[1] >= '0' && w[1] <= '9')) {
      // Short options, one or several (-vq), or one with its value (-ofile): -h among them is help.
      short_options_ = true;
      if (w.find('h') != std::string::npos) every_ = true;
    }
  }
}

bool AskedOptions::wants(std::string_view names) const {
  if (every_ || !names.starts_with('-')) return true;
  for (std::size_t pos = 0; pos < names.size();) {
    const std::size_t comma = std::min(names.find(',', pos), names.size());
    const std::string_view name = names.substr(pos, comma - pos);
    if (name.starts_with("--")) {
      if (std::find(long_names_.begin(), long_names_.end(), name.substr(2)) != long_names_.end()) return true;
    } else if (short_options_) {
      return true;
    }
    pos = comma + 1;
  }
  return false;
}

CLI::Option* CommandSetup::unused() {
  // One for every command and option, never destroyed: commands keep the Option* of some
  // options (to ask for their count()) until the process ends.
  static CLI::Option* const stand_in = (new CLI::App)->add_option("--unused");
  return stand_in;
}

namespace {

// The command line after main() has read its command: the words CLI11 parses (the command
// first, in its own spelling) and the command they name, or none.
struct CommandLine {
  std::vector<std::string> words;  // argv[0] first
  std::string command;             // "" when the first word is an option, or there is none
};

// The first argument, when it is not an option, is the command: its case is fixed (`AND`,
// `Bit_Xor`), `help [COMMAND]` becomes --help, and an unknown one is refused by name with the
// nearest known one (Errc::usage).
CommandLine read_command(std::vector<std::string> words) {
  CommandLine line{std::move(words), {}};
  std::vector<std::string>& w = line.words;
  if (w.size() < 2 || w[1][0] == '-') return line;
  const auto unknown = [](const std::string& word, bool offer_help) {
    const std::string near = nearest_command(word);
    return Error(
        Errc::usage,
        fmt::format("unknown command '{}'{}", cut(word),
                    near.empty() || (near == "help" && !offer_help) ? "" : fmt::format(" (did you mean '{}'?)", near)));
  };
  if (lower(w[1]) == "help") {
    w.erase(w.begin() + 1);
    if (w.size() >= 2 && lower(w[1]) == "help") w.erase(w.begin() + 1);  // `help help`: this help
    if (w.size() < 2 || w[1][0] == '-') {
      w.insert(w.begin() + 1, "--help");
      return line;
    }
    const auto named = command_named(w[1]);
    if (!named) throw unknown(w[1], false);
    w.insert(w.begin() + 2, "--help");
    w[1] = line.command = *named;
    return line;
  }
  const auto named = command_named(w[1]);
  if (!named) throw unknown(w[1], true);
  w[1] = line.command = *named;
  return line;
}

// Whether the words after the program's name only ask for its help or version, which list the
// commands but none of their options.
bool only_help_or_version(const std::vector<std::string>& words) {
  return std::all_of(words.begin() + 1, words.end(),
                     [](const std::string& w) { return w == "-h" || w == "--help" || w == "--version"; });
}

// Every command, in --help's order.
std::vector<Command> commands() {
  std::vector<Command> all{info_command(),
                           ops_command(),
                           check_command(),
                           devices_command(),
                           completion_command(),
                           // Listed with the commands; never run as one: read_command() turns
                           // `help [COMMAND]` into --help.
                           {"help", {}, "Print this help, or a command's: dmlbits help COMMAND", {}}};
  for (const OpInfo& op : op_table()) all.push_back(op_command(op));
  all.push_back(eval_command());
  return all;
}

// The program's commands, as far as `line` needs them: the command it names, set up with the
// options it names (or all of them, for its --help); `completion`, every command with every
// option; no command named, every command without its options where only the program's help or
// version is asked (they list the commands), else with all of them.
void add_commands(CLI::App& app, const CommandLine& line) {
  const std::function<std::string()> version = version_text;
  const std::string footer = exit_status_summary() + "\n" + kSeeManual;
  app.set_version_flag("--version", version, "Print the version, commit, compiler and backends, and exit");
  app.footer(footer);
  const bool every_command = line.command.empty() || line.command == "completion";
  const bool no_options = line.command.empty() && only_help_or_version(line.words);
  const AskedOptions asked = every_command ? AskedOptions::every() : AskedOptions(std::span(line.words).subspan(2));
  for (Command& command : commands()) {
    if (!every_command && command.name != line.command) continue;
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    for (const std::string& alias : command.aliases) sub->alias(alias);
    if (!no_options && command.setup) {
      CommandSetup setup(*sub, asked);
      command.setup(&setup);
    }
    // --version after a command too (`dmlbits ops --version`), as the manual lists it for every
    // command; every command's help ends as the program's does.
    sub->set_version_flag("--version", version, "Print the version, commit, compiler and backends, and exit");
    sub->footer(footer);
  }
}

// The exit status of the failure being handled (called from a catch clause), reported as the
// manual's EXIT STATUS says: the one place where an exception becomes a message and a status.
int exit_status_of_failure(CLI::App& app) {
  try {
    throw;
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command that already reported its failures
  } catch (const CLI::Success& e) {
    return app.exit(e, std::cout, std::cerr);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return usage_error(current_command(app), parse_error_text(e));
  } catch (const OptionError& e) {  // an option's refusal, in the command line's words
    if (e.code() == Errc::usage) return usage_error(current_command(app), app::option_error_text(e));
    std::cerr << "dmlbits: " << app::option_error_text(e) << '\n';
    return exit_status(e.code());
  } catch (const Error& e) {
    if (e.code() == Errc::broken_pipe) return exit_status(Errc::broken_pipe);  // quietly: see main()
    if (e.code() == Errc::usage) return usage_error(current_command(app), e.what());
    std::cerr << "dmlbits: " << e.what() << '\n';
    return exit_status(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "dmlbits: out of memory\n";
    return exit_status(Errc::io);
  } catch (const std::exception& e) {
    std::cerr << "dmlbits: internal error: " << e.what() << '\n';
    return exit_status(Errc::internal);
  }
}

// Reads the command line and runs the command it names; returns the exit status.
int run_command_line(int argc, char** argv) {
  CLI::App app{"dmlbits: run DirectML's element-wise bitwise operators (DML_ELEMENT_WISE_BIT_*) on tensors", "dmlbits"};
  // Wide enough that no option's description starts on a line of its own.
  app.get_formatter()->column_width(44);
  // CLI11 takes "/name" for an option on Windows by default, and "/data/a.npy" is a path there
  // too (on the current drive): options are spelt as the manual spells them, everywhere.
  // Before the commands are added, which copy the setting.
  app.allow_windows_style_options(false);
  app.require_subcommand(1);
  try {
    // UTF-8 whatever the system: on Windows main's argv is in the ANSI code page.
    const CommandLine line = read_command(command_line_arguments(argc, argv));
    add_commands(app, line);
    std::vector<const char*> words;
    for (const std::string& w : line.words) words.push_back(w.c_str());
    app.parse(static_cast<int>(words.size()), words.data());
    return 0;
  } catch (...) {
    return exit_status_of_failure(app);
  }
}

}  // namespace
}  // namespace dmlbits::app

int main(int argc, char** argv) {
  // The GPU devices the command used are released when main returns, on every path, before the
  // exit handlers run (a Vulkan driver's among them): see release_gpu_devices().
  struct ReleaseDevices {
    ~ReleaseDevices() { dmlbits::release_gpu_devices(); }
  } const release_devices;
  // SIGINT/SIGTERM ask the library to stop; a closed pipe is an error from the write, not a
  // signal: dmlbits then removes its temporary files and exits with 141 quietly, as a tool
  // ended by SIGPIPE would.
  dmlbits::install_interrupt_handlers();
  // Never destroyed: std::cout is flushed once more after main returns (by the library's exit
  // handler), and must not reach a buffer that is gone by then.
  StdoutBuf& stdout_buf = *new StdoutBuf;
  std::cout.rdbuf(&stdout_buf);
  const int status = dmlbits::app::run_command_line(argc, argv);
  // Output may be buffered in std::cout; a failed flush (a full disk) is an I/O error, not a
  // success, and a closed pipe is the reader's choice (`| head -1`): exit as SIGPIPE would.
  std::cout.flush();
  const std::error_code err = stdout_buf.error();
  if (!err) return status;
  if (err == std::errc::broken_pipe) return dmlbits::exit_status(dmlbits::Errc::broken_pipe);
  std::cerr << "dmlbits: writing standard output: " << err.message() << '\n';
  return status != 0 ? status : dmlbits::exit_status(dmlbits::Errc::io);
}
