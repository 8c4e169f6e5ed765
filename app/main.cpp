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
#include "dmlbits/devices.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/process.hpp"
#include "dmlbits/ops.hpp"
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

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

constexpr const char* kOtherCommands[] = {"info", "ops", "check", "devices", "completion"};

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
    const std::size_t score = 2 * edit_distance(l, n) + (!l.empty() && !n.empty() && l[0] != n[0] ? 1 : 0);
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
  std::cerr << "dmlbits: " << where << what << "; see " << help << '\n';
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
      return fmt::format("missing operand {}", name == "files" || name == "manifests" ? name.substr(0, name.size() - 1) : name);
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

int main(int argc, char** argv) {
  using namespace dmlbits;
  // The GPU devices the command used are released when main returns, on every path, before the
  // exit handlers run (a Vulkan driver's among them): see release_gpu_devices().
  struct ReleaseDevices {
    ~ReleaseDevices() { release_gpu_devices(); }
  } const release_devices;
  // SIGINT/SIGTERM ask the library to stop; a closed pipe is an error from the write, not a
  // signal: dmlbits then removes its temporary files and exits with 141 quietly, as a tool
  // ended by SIGPIPE would (main below).
  install_interrupt_handlers();
  // Never destroyed: std::cout is flushed once more after main returns (by the library's exit
  // handler), and must not reach a buffer that is gone by then.
  StdoutBuf& stdout_buf = *new StdoutBuf;
  std::cout.rdbuf(&stdout_buf);

  // The first argument, when it is not an option, is the command: fix its case, turn `help`
  // into --help, and refuse an unknown one by name with the nearest known one.
  // UTF-8 whatever the system: on Windows main's argv is in the ANSI code page.
  const std::vector<std::string> arguments = command_line_arguments(argc, argv);
  std::vector<const char*> args;
  for (const std::string& a : arguments) args.push_back(a.c_str());
  argc = static_cast<int>(args.size());
  std::string command_arg;
  if (argc >= 2 && args[1][0] != '-') {
    const std::string first = args[1];
    if (lower(first) == "help") {
      args.erase(args.begin() + 1);
      if (args.size() >= 2 && lower(args[1]) == "help") args.erase(args.begin() + 1);  // `help help`: this help
      if (args.size() >= 2 && args[1][0] != '-') {
        auto named = command_named(args[1]);
        if (!named) {
          const std::string near = nearest_command(args[1]);
          return usage_error("", fmt::format("unknown command '{}'{}", cut(args[1]),
                                             near.empty() || near == "help" ? "" : fmt::format(" (did you mean '{}'?)", near)));
        }
        command_arg = *named;
        args[1] = command_arg.c_str();
        args.insert(args.begin() + 2, "--help");
      } else {
        args.insert(args.begin() + 1, "--help");
      }
    } else if (auto named = command_named(first)) {
      command_arg = *named;
      args[1] = command_arg.c_str();
    } else {
      const std::string near = nearest_command(first);
      return usage_error("", fmt::format("unknown command '{}'{}", cut(first),
                                         near.empty() ? "" : fmt::format(" (did you mean '{}'?)", near)));
    }
  }
  const int nargs = static_cast<int>(args.size());

  CLI::App app{"dmlbits: run DirectML's element-wise bitwise operators (DML_ELEMENT_WISE_BIT_*) on tensors", "dmlbits"};
  // Wide enough that no option's description starts on a line of its own.
  app.get_formatter()->column_width(44);
  // CLI11 takes "/name" for an option on Windows by default, and "/data/a.npy" is a path there
  // too (on the current drive): options are spelt as the manual spells them, everywhere.
  // Before the commands are added, which copy the setting.
  app.allow_windows_style_options(false);
  // Written only when asked for: composing it (the backends built in, the instruction sets) is
  // work and fresh heap pages that every other run paid for at start-up.
  const std::function<std::string()> version = app::version_text;
  app.set_version_flag("--version", version, "Print the version, commit, compiler and backends, and exit");
  app.require_subcommand(1);
  app.footer(app::exit_status_summary() + "\n" + app::kSeeManual);
  // Building CLI11's option tables is most of a small run's instructions (3 of 4 million with
  // all seven operator commands, about 170 options). When the first argument names an
  // operator, which is then the command, only that command is built: the others could not
  // match anyway (one subcommand is required and it comes first), and help and errors for the
  // operator read the same.
  const OpInfo* named = nargs >= 2 ? find_op(args[1]) : nullptr;
  if (named == nullptr) {
    app::setup_info(app);
    app::setup_ops(app);
    app::setup_check(app);
    app::setup_devices(app);
    app::setup_completion(app);
    // Listed with the commands; never run as one: main() turns `help [COMMAND]` into --help.
    app.add_subcommand("help", "Print this help, or a command's: dmlbits help COMMAND");
  }
  app::setup_op_commands(app, named);
  // --version after a command too (`dmlbits ops --version`), as the manual lists it for every command.
  // Every command's help ends as the top-level one does.
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->set_version_flag("--version", version, "Print the version, commit, compiler and backends, and exit");
    sub->footer(app::exit_status_summary() + "\n" + app::kSeeManual);
  }
  int status = 0;
  try {
    app.parse(nargs, args.data());
  } catch (const CLI::RuntimeError& e) {
    status = e.get_exit_code();  // a command that already reported its failures
  } catch (const CLI::CallForHelp& e) {
    status = app.exit(e, std::cout, std::cerr);
  } catch (const CLI::CallForAllHelp& e) {
    status = app.exit(e, std::cout, std::cerr);
  } catch (const CLI::CallForVersion& e) {
    status = app.exit(e, std::cout, std::cerr);
  } catch (const CLI::ParseError& e) {
    return usage_error(current_command(app), parse_error_text(e));
  } catch (const OptionError& e) {  // an option's refusal, in the command line's words
    if (e.code() == Errc::usage) return usage_error(current_command(app), app::option_error_text(e));
    std::cerr << "dmlbits: " << app::option_error_text(e) << '\n';
    status = exit_status(e.code());
  } catch (const Error& e) {
    if (e.code() == Errc::broken_pipe) return exit_status(Errc::broken_pipe);  // quietly: see above
    if (e.code() == Errc::usage) return usage_error(current_command(app), e.what());
    std::cerr << "dmlbits: " << e.what() << '\n';
    status = exit_status(e.code());
  } catch (const std::bad_alloc&) {
    std::cerr << "dmlbits: out of memory\n";
    status = exit_status(Errc::io);
  } catch (const std::exception& e) {
    std::cerr << "dmlbits: internal error: " << e.what() << '\n';
    status = exit_status(Errc::internal);
  }
  // Output may be buffered in std::cout; a failed flush (a full disk) is an I/O error, not a
  // success, and a closed pipe is the reader's choice (`| head -1`): exit as SIGPIPE would.
  std::cout.flush();
  if (const std::error_code err = stdout_buf.error()) {
    if (err == std::errc::broken_pipe) return exit_status(Errc::broken_pipe);
    std::cerr << "dmlbits: writing standard output: " << err.message() << '\n';
    return status != 0 ? status : exit_status(Errc::io);
  }
  return status;
}
