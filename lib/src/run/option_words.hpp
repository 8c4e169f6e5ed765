// How each face spells an option in the messages that refuse it (the run layer's one place for it).
#pragma once

#include <string>
#include <string_view>

#include "run_types.hpp"

namespace dmlbits {

enum class OptionSpelling {
  name,      // the option itself: --threads / threads
  argument,  // the option as something passed: --threads / threads=
};

// `key` is the option's keyword (threads, in_place, out_dtype). The command line spells it as its
// flag (--out-dtype); Python as its keyword (out_dtype, or out_dtype= for OptionSpelling::argument),
// and in_place as the call that asks for it (out=x (in place)). A manifest's refusals of the
// backend options and of repeat/in_place use the command line's words (the man page pins them);
// the operator options a manifest names as keys are quoted keys: see request.cpp's option_name.
std::string option_word(RequestFace face, std::string_view key, OptionSpelling spelling = OptionSpelling::name);

}  // namespace dmlbits
