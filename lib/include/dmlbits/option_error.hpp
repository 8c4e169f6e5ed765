// A refused option value as data: which option, which rule, the value given. The library
// throws an OptionError and never spells an option as a face does: each face (the command line
// in app/, `check` manifests in lib/src/golden/check.cpp, the Python module) renders it in its
// own spelling (--out-dtype, "out_dtype", out_dtype=) through option_error_text(). The parsers
// that throw it, one per kind of value, are in options.hpp.
//
// what() is the sentence in the library's own words, the keywords of OperationRequest's
// fields (threads, out_dtype), for a caller with no spelling of its own.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/error.hpp"

namespace dmlbits {

// The options the faces offer, by meaning.
enum class OptionKey : std::uint8_t {
  backend, dtype, out_dtype, feature_level, shift_overflow, isa, adapter, threads, repeat, warmup, in_place,
};
// The option's keyword: OperationRequest's field, Python's keyword, a manifest's key ("out_dtype").
std::string_view option_keyword(OptionKey key);

enum class OptionRule : std::uint8_t {
  unknown_name,      // not a name of the option's table; choices() are the names
  not_a_count,       // threads as text: not a whole number from 1 to subject()
  zero,              // threads: 0 (subject(): the most, kMaxThreads)
  above_maximum,     // threads: more than subject()
  empty,             // adapter: an empty name
  too_few,           // repeat below 1 or warmup below 0 (one rule for the two)
  no_such_adapter,   // adapter: an index or name part that matches no adapter; choices() are the adapters
  ambiguous,         // adapter: part of subject() adapters' names; choices() are the adapters
  not_for_backend,   // isa, threads or adapter given to the backend subject(), which has no such choice;
                     // for adapter, choices() are the backends that take one
  not_for_operator,  // out_dtype or shift_overflow given to the operator subject(); choices() are the
                     // operators that take it
  not_offered,       // in_place: DirectML does not let subject()'s output alias its input
  runs_once,         // in_place with repeat or warmup
  needed,            // dtype: no operand names one (subject(): where it was needed: "operand", "json")
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

}  // namespace dmlbits
