// SampleStats as the JSON object of --time-json's "execute.stats_s". Private: the one writer of
// that document is timing_json (dmlbits/request.hpp); faces get the text, not nlohmann types.
#pragma once

#include <nlohmann/json.hpp>

#include "dmlbits/timing.hpp"

namespace dmlbits {

nlohmann::json to_json(const SampleStats& s);

}  // namespace dmlbits
