// The --report-json document as JSON, for compare_report_json (dmlbits/check.hpp) and the tests.
#pragma once

#include <nlohmann/json.hpp>

#include "dmlbits/check.hpp"

namespace dmlbits {

nlohmann::json compare_json(const CompareReport& r);

}  // namespace dmlbits
