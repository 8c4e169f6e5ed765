// The command line's face for option words: its spelling of an option (--out-dtype) in the
// library's refusals (error.hpp), and the operators' options read by the library's
// parsers (request.hpp) as CLI11 reads them.
#include <algorithm>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits::app {
namespace {

std::string flag(OptionKey key) {
  if (key == OptionKey::output) return "-o";
  std::string flag = fmt::format("--{}", option_keyword(key));
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

}  // namespace

std::string option_error_text(const OptionError& e) { return dmlbits::option_error_text(e, {&flag, &flag, '\''}); }

std::string adapter_backends_text() {
  const std::vector<std::string> names = adapter_backend_names();
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return out;
}

CLI::Option* add_parsed_option(CLI::App& sub, const std::string& name, std::function<void(const std::string&)> parse,
                               const std::string& help) {
  // The parser's OptionError leaves CLI11's parse as it is (CLI11 catches only its own
  // ValidationError), and main() words it as every other refusal of an option.
  return sub.add_option_function<std::string>(name, std::move(parse), help);
}

}  // namespace dmlbits::app
