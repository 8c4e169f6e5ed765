// Option words parsed once: one parser per kind of option value, each over its kind's own table
// (backend_kinds(), dtype_table(), feature_levels(), shift_overflow_modes(), isa_names()) and
// one check per numeric rule. Every face calls these: the command line as CLI11 checks
// (app/option_errors.cpp), `check` manifests for their keys, the Python module for its keywords.
//
// Contract: each returns the value's type or throws OptionError (option_error.hpp), Errc::usage,
// naming the option by OptionKey and never in a face's words; the face renders it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/ops.hpp"
#include "dmlbits/option_error.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits {

// --backend: a name of backend_kinds() ("auto", "cpu-reference").
BackendKind parse_backend_option(std::string_view text);
// --dtype and --out-dtype (`key`): any spelling parse_dtype_name() takes ("uint8", "u1", "UINT8").
DType parse_dtype_option(std::string_view text, OptionKey key = OptionKey::dtype);
// --feature-level: "4_1", "4.1" or "DML_FEATURE_LEVEL_4_1" of a level feature_levels() holds.
FeatureLevel parse_feature_level_option(std::string_view text);
// --shift-overflow: a name of shift_overflow_modes().
ShiftOverflow parse_shift_overflow_option(std::string_view text);
// --isa: a name of isa_names(), returned as the table spells it (whether this CPU runs it is
// prepare_request()'s question: Errc::unsupported).
std::string parse_isa_option(std::string_view text);
// --threads as text: a whole number from 1 to kMaxThreads (OptionRule::not_a_count).
unsigned parse_threads_option(std::string_view text);
// A thread count given as a number: 1 to kMaxThreads (OptionRule::zero, above_maximum).
unsigned check_threads_option(unsigned threads);
// --repeat at least 1 and --warmup at least 0 (OptionRule::too_few).
void check_repeat_option(int repeat, int warmup);
// --adapter: an index or part of a name, so not empty (OptionRule::empty).
void check_adapter_option(std::string_view adapter);

// The names an option of a table takes, in the table's order (the default first where the
// table says so), for help, completion and OptionError::choices(); empty for other options.
std::vector<std::string> option_choices(OptionKey key);

}  // namespace dmlbits
