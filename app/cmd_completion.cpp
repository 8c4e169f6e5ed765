// dmlbits completion bash: a bash completion script, generated from the program itself. The
// commands and their options are CLI11's own (the parser that will read the line), their values
// come from the library's tables (operators and aliases, data types per operator, feature
// levels, backends, instruction sets, shift modes), so that the script cannot drift from the
// program: packages install its output (CMakeLists.txt), and tests/cli/completion.sh drives it
// through bash's `complete`.
#include <iostream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/dtype.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits::app {
namespace {

// What an option's value, or a command's operands, may be.
struct Values {
  enum Kind { none, words, files } kind = none;
  std::vector<std::string> list;  // for words
};

std::vector<std::string> dtype_names(DTypeSet set) {
  std::vector<std::string> names;
  for (const DTypeInfo& t : dtype_table())
    if (set.contains(t.dtype)) names.emplace_back(t.numpy_name);
  return names;
}

// The words a CLI11 IsMember check accepts, which CLI11 writes into the type name as
// "TEXT:{npy,json}"; empty if the option has none.
std::vector<std::string> member_words(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  const auto open = type.find('{');
  const auto close = type.find('}', open);
  std::vector<std::string> words;
  if (open == std::string::npos || close == std::string::npos) return words;
  std::string inside = type.substr(open + 1, close - open - 1);
  for (std::size_t pos = 0; pos <= inside.size();) {
    const std::size_t comma = std::min(inside.find(',', pos), inside.size());
    if (comma > pos) words.push_back(inside.substr(pos, comma - pos));
    pos = comma + 1;
  }
  return words;
}

// The values of one option of command `cmd` (`op` when it is an operator command).
Values option_values(const CLI::Option& opt, const OpInfo* op) {
  const std::string name = opt.get_lnames().empty() ? std::string() : opt.get_lnames().front();
  std::vector<std::string> words;
  if (name == "feature-level") {
    words = option_choices(OptionKey::feature_level);
  } else if (name == "dtype" || name == "out-dtype") {
    // An operator's: the types some feature level accepts there; info's: every type.
    DTypeSet set;
    if (op == nullptr) {
      for (const DTypeInfo& t : dtype_table()) set = set | DTypeSet{t.dtype};
    } else {
      for (const OpTier& tier : op->tiers) set = set | (name == "dtype" ? tier.inputs : tier.outputs);
    }
    words = dtype_names(set);
  } else if (name == "backend") {
    words = option_choices(OptionKey::backend);
  } else if (name == "isa") {
    words = option_choices(OptionKey::isa);
  } else if (name == "shift-overflow") {
    words = option_choices(OptionKey::shift_overflow);
  } else if (name == "adapter" || name == "filter") {
    return {};  // a name or free text: nothing to offer
  } else {
    words = member_words(opt);
  }
  if (!words.empty()) return {Values::words, words};
  // Otherwise a text value is a file name (-o, --junit, --expect, ...) and a number is a number.
  const std::string type = opt.get_type_name();
  if (type.starts_with("TEXT")) return {Values::files, {}};
  return {};
}

std::string quoted_words(const std::vector<std::string>& words) { return fmt::format("'{}'", fmt::join(words, " ")); }

// `case` branch lines that set values for the options of `names`.
void emit_value_case(std::string& out, const std::map<std::string, std::vector<std::string>>& by_values) {
  for (const auto& [action, names] : by_values)
    out += fmt::format("        {}) {} ;;\n", fmt::join(names, "|"), action);
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string bash_script(CLI::App& root) {
  std::vector<std::string> commands;  // every name a first word may be, aliases included
  std::string alias_case;             // maps an alias (lower case, as main() compares) to its command
  std::string command_case;
  for (CLI::App* sub : root.get_subcommands([](CLI::App*) { return true; })) {
    const std::string cmd = sub->get_name();
    if (cmd == "help") continue;  // main() turns it into --help; completed below, with the commands
    const OpInfo* op = find_op(cmd);
    commands.push_back(cmd);
    std::vector<std::string> spellings{cmd};
    for (const std::string& alias : sub->get_aliases()) {
      commands.push_back(alias);
      spellings.push_back(lower(alias));
    }
    if (spellings.size() > 1) alias_case += fmt::format("    {}) cmd={} ;;\n", fmt::join(spellings, "|"), cmd);

    std::vector<std::string> option_words;
    std::map<std::string, std::vector<std::string>> by_values;  // action -> option spellings
    Values operands{Values::none, {}};
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->get_group().empty()) continue;  // hidden
      if (opt->get_positional()) {
        const std::vector<std::string> words = member_words(*opt);
        operands = words.empty() ? Values{Values::files, {}} : Values{Values::words, words};
        continue;
      }
      std::vector<std::string> spellings_of;
      for (const std::string& l : opt->get_lnames()) spellings_of.push_back("--" + l);
      for (const std::string& s : opt->get_snames()) spellings_of.push_back("-" + s);
      option_words.insert(option_words.end(), spellings_of.begin(), spellings_of.end());
      if (opt->get_expected_max() == 0) continue;  // a flag takes no value
      const Values v = option_values(*opt, op);
      const std::string action = v.kind == Values::words   ? "_dmlbits_words " + quoted_words(v.list) + "; return"
                                 : v.kind == Values::files ? "_dmlbits_files; return"
                                                           : "return";  // a number or free text
      auto& names = by_values[action];
      names.insert(names.end(), spellings_of.begin(), spellings_of.end());
    }
    command_case += fmt::format("    {})\n      opts={}\n", cmd, quoted_words(option_words));
    if (!by_values.empty()) {
      command_case += "      case $opt in\n";
      emit_value_case(command_case, by_values);
      command_case += "      esac\n";
    }
    command_case += operands.kind == Values::files ? "      operands=files ;;\n"
                    : operands.kind == Values::words
                        ? fmt::format("      operands={} ;;\n", quoted_words(operands.list))
                        : "      operands= ;;\n";
  }
  commands.push_back("help");

  std::string out = fmt::format(
      R"(# bash completion for dmlbits. Generated by `dmlbits completion bash` ({version}):
# the commands, options and values are the program's own. Install it as
# /usr/share/bash-completion/completions/dmlbits, or source it from ~/.bashrc:
#   source <(dmlbits completion bash)

# _dmlbits_words WORDS: complete the current word from WORDS.
_dmlbits_words() {{
  local IFS=$'\n'
  COMPREPLY=($(compgen -W "${{1// /$'\n'}}" -- "$cur"))
}}

# _dmlbits_files: complete the current word as a file name.
_dmlbits_files() {{
  compopt -o filenames 2>/dev/null
  local IFS=$'\n'
  COMPREPLY=($(compgen -f -- "$cur"))
}}

_dmlbits() {{
  COMPREPLY=()
  local cur=${{COMP_WORDS[COMP_CWORD]}} opt="" cmd="" i
  ((COMP_CWORD > 0)) && opt=${{COMP_WORDS[COMP_CWORD - 1]}}
  # --option=value: bash splits the word at '='.
  if [[ $cur == "=" ]]; then
    cur=""
  elif [[ $opt == "=" ]] && ((COMP_CWORD > 1)); then
    opt=${{COMP_WORDS[COMP_CWORD - 2]}}
  fi
  # The command is the first word that is not an option; dmlbits takes it in any case.
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [[ ${{COMP_WORDS[i]}} != -* ]]; then
      cmd=${{COMP_WORDS[i],,}}
      break
    fi
  done
  case $cmd in
{alias_case}  esac
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      _dmlbits_words '--help --version'
    else
      _dmlbits_words {commands}
    fi
    return
  fi
  local opts operands
  case $cmd in
    help)
      ((i == COMP_CWORD - 1)) && _dmlbits_words {commands}
      return ;;
{command_case}    *) return ;;
  esac
  if [[ $cur == -* ]]; then
    _dmlbits_words "$opts"
  elif [[ $operands == files ]]; then
    _dmlbits_files
  elif [[ -n $operands ]]; then
    _dmlbits_words "$operands"
  fi
}}
complete -F _dmlbits dmlbits
)",
      fmt::arg("version", DMLBITS_VERSION), fmt::arg("alias_case", alias_case),
      fmt::arg("commands", quoted_words(commands)), fmt::arg("command_case", command_case));
  return out;
}

void setup_completion(CommandSetup* sub) {
  auto shell = std::make_shared<std::string>();
  sub->add_option("shell", *shell, "The shell: bash")->required()->check(CLI::IsMember({"bash"}));
  CLI::App* root = &sub->root();
  sub->final_callback([root, shell] { std::cout << bash_script(*root); });
}

}  // namespace

Command completion_command() { return {"completion", {}, "Print a shell completion script (bash)", setup_completion}; }

}  // namespace dmlbits::app
