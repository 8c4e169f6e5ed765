#include "dmlbits/error.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "dmlbits/dtype.hpp"

namespace dmlbits {
namespace {

// "a, b and c" (`last` "or": "a, b or c"), each between two `quote`s.
std::string listed(const std::vector<std::string>& words, std::string_view last, std::string_view quote = "") {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    out += i == 0 ? "" : i + 1 == words.size() ? fmt::format(" {} ", last) : ", ";
    out += fmt::format("{}{}{}", quote, words[i], quote);
  }
  return out;
}

// What an unknown name is called, and the names it could have been.
std::string unknown_name_text(const OptionError& e, const OptionSpelling& s) {
  const auto& c = e.choices();
  const std::string given = fmt::format("{}{}{}", s.quote, e.value(), s.quote);
  switch (e.key()) {
    case OptionKey::backend:
      return fmt::format("unknown backend {} (available: {})", given, fmt::join(c, ", "));
    case OptionKey::dtype:
    case OptionKey::out_dtype:
      return fmt::format("unknown data type {} (known: {})", given, dtype_names_help());
    case OptionKey::feature_level:
      return fmt::format("unknown level {} ({} to {}, also written 4.1 or DML_FEATURE_LEVEL_4_1)", given,
                         c.empty() ? "" : c.front(), c.empty() ? "" : c.back());
    case OptionKey::shift_overflow:
      return fmt::format("unknown mode {} ({})", given, listed(c, "or", std::string_view(&s.quote, 1)));
    case OptionKey::isa:
      return fmt::format("unknown instruction set {} (known: {})", given, fmt::join(c, ", "));
    default:
      return fmt::format("unknown value {} (known: {})", given, fmt::join(c, ", "));
  }
}

// The adapters there are ("0 NAME, 1 NAME"), as a refusal of --adapter lists them.
std::string adapters(const OptionError& e) {
  return e.choices().empty() ? std::string("none") : fmt::format("{}", fmt::join(e.choices(), ", "));
}

std::string keyword(OptionKey key) { return std::string(option_keyword(key)); }

}  // namespace

std::string_view option_keyword(OptionKey key) {
  switch (key) {
    case OptionKey::backend:
      return "backend";
    case OptionKey::dtype:
      return "dtype";
    case OptionKey::out_dtype:
      return "out_dtype";
    case OptionKey::feature_level:
      return "feature_level";
    case OptionKey::shift_overflow:
      return "shift_overflow";
    case OptionKey::isa:
      return "isa";
    case OptionKey::adapter:
      return "adapter";
    case OptionKey::threads:
      return "threads";
    case OptionKey::repeat:
      return "repeat";
    case OptionKey::warmup:
      return "warmup";
    case OptionKey::in_place:
      return "in_place";
    case OptionKey::output:
      return "output";
    case OptionKey::out:
      return "out";
    case OptionKey::format:
      return "format";
    case OptionKey::emit_dxdispatch:
      return "emit_dxdispatch";
    case OptionKey::shard:
      return "shard";
  }
  return "?";
}

OptionSpelling keyword_spelling() { return {&keyword, &keyword, '\''}; }

std::string option_error_text(const OptionError& e, const OptionSpelling& s) {
  const OptionKey k = e.key();
  const std::string name = s.name(k), arg = s.argument(k);
  const std::string given = fmt::format("{}{}{}", s.quote, e.value(), s.quote);
  const auto& subject = e.subject();
  std::string text;
  switch (e.rule()) {
    case OptionRule::unknown_name:
      text = fmt::format("{}: {}", name, unknown_name_text(e, s));
      break;
    case OptionRule::not_a_count:
      text = fmt::format("{}: {} is not a thread count from 1 to {}", name, given, subject);
      break;
    case OptionRule::zero:
      text = fmt::format("{}: 0 is not from 1 to {}", name, subject);
      break;
    case OptionRule::above_maximum:
      text = fmt::format("{}: {} is more than {}", name, e.value(), subject);
      break;
    case OptionRule::empty:
      text = e.key() == OptionKey::output
                 ? fmt::format("{}: an empty file name names no file", name)
                 : fmt::format("{}: an empty name matches no adapter (give an index or part of a name)", name);
      break;
    case OptionRule::too_few:
      text =
          fmt::format("{} must be at least 1 and {} at least 0", s.name(OptionKey::repeat), s.name(OptionKey::warmup));
      break;
    case OptionRule::no_such_adapter: {
      const bool index = !e.value().empty() && e.value().find_first_not_of("0123456789") == std::string::npos;
      text = index ? fmt::format("{}: no adapter {} (adapters: {})", name, e.value(), adapters(e))
                   : fmt::format("{}: no adapter named like {} (adapters: {})", name, given, adapters(e));
      break;
    }
    case OptionRule::ambiguous:
      text =
          fmt::format("{}: {} matches {} adapters; give its index (adapters: {})", name, given, subject, adapters(e));
      break;
    case OptionRule::applies_to_none:
      text = fmt::format("{} applies to the {} backends, and no case of {} runs on one", arg,
                         listed(e.choices(), "and"), subject);
      break;
    case OptionRule::not_for_backend:
      if (k == OptionKey::isa)
        text = fmt::format("the {} backend has no choice of instruction set (asked for {})", subject, given);
      else if (k == OptionKey::threads)
        text = fmt::format("the {} backend has no choice of CPU threads ({})", subject, arg);
      else text = fmt::format("{} applies to the {} backends, not {}", arg, listed(e.choices(), "and"), subject);
      break;
    case OptionRule::not_for_operator:
      text = fmt::format("{} does not apply to {} (only {} {} it)", name, subject, listed(e.choices(), "and"),
                         e.choices().size() == 1 ? "takes" : "take");
      break;
    case OptionRule::not_offered:
      text = fmt::format("{} is not offered: DirectML does not let {}'s output alias its input", name, subject);
      break;
    case OptionRule::runs_once:
      text = fmt::format("{} runs once: it cannot be combined with {} or {}", name, s.name(OptionKey::repeat),
                         s.name(OptionKey::warmup));
      break;
    case OptionRule::with_output:
      text = fmt::format("{} and {} cannot be combined", name, s.name(OptionKey::output));
      break;
    case OptionRule::read_only:
      text = fmt::format("{}: operand A is read-only", name);
      break;
    case OptionRule::wrong_dtype:
      text = fmt::format("{}: the result is {}, but {} has dtype {}", name, subject, name, e.value());
      break;
    case OptionRule::wrong_shape:
      text = fmt::format("{}: the result has shape {}, but {} has shape {}", name, subject, name, e.value());
      break;
    case OptionRule::not_for_golden:
      text = fmt::format(
          "a golden file must name its data type: write it as {{\"dtype\": ..., \"data\": ...}} ({} "
          "applies to inputs, not to goldens)",
          arg);
      break;
    case OptionRule::needs_file:
      text = fmt::format("{} needs input A to be a file", name);
      break;
    case OptionRule::no_file_name:
      text = subject == "named" ? fmt::format("{}: {} names no file", name, given)
                                : fmt::format("{} needs a file name (the model and its .npy files are files)", name);
      break;
    case OptionRule::cannot_tell:
      text = fmt::format("cannot tell the output format from {}: name it .npy or .json, or use {}", given, arg);
      break;
    case OptionRule::binary_terminal:
      text = fmt::format("refusing to write binary .npy to a terminal; redirect it, or use {} json", arg);
      break;
    case OptionRule::not_backend_rule:
      text = fmt::format(
          "{} {} is not DirectML's rule for shift counts of the element width and more; the {} backend runs shifts "
          "with {} {} only",
          name, e.value(), subject, name, listed(e.choices(), "or"));
      break;
    case OptionRule::out_of_range:
      text = fmt::format("{} {}: K counts from 0 and must be below N (N >= 1)", name, e.value());
      break;
    case OptionRule::needed:
      text = subject == "json"
                 ? fmt::format(
                       "the data type is unknown: give the tensor as {{\"dtype\": ..., \"data\": ...}} or use {}", arg)
                 : fmt::format("the data type is unknown: no other operand names one; use {}", arg);
      break;
  }
  return e.context().empty() ? text : fmt::format("{}: {}", e.context(), text);
}

OptionError::OptionError(OptionKey key, OptionRule rule, std::string value, std::string subject,
                         std::vector<std::string> choices, Errc code)
    : Error(code, ""),
      key_(key),
      rule_(rule),
      value_(std::move(value)),
      subject_(std::move(subject)),
      choices_(std::move(choices)) {
  static_cast<Error&>(*this) = Error(code, option_error_text(*this, keyword_spelling()));
}

OptionError OptionError::with_context(std::string_view context) const {
  OptionError e = *this;
  e.context_ = context_.empty() ? std::string(context) : fmt::format("{}: {}", context, context_);
  static_cast<Error&>(e) = Error(code(), option_error_text(e, keyword_spelling()));
  return e;
}

}  // namespace dmlbits
