// The golden layer's own: the --report-json document as JSON, and check_golden for
// run_manifests, which names all the goldens it updates together (dmlbits/check.hpp).
#pragma once

#include <memory>

#include <nlohmann/json.hpp>

#include "dmlbits/check.hpp"

namespace dmlbits {

class OutputFile;

// The --report-json document as JSON, for compare_report_json and the tests.
nlohmann::json compare_json(const CompareReport& r);

// check_golden(), except that a golden to update is prepared in `pending`, complete but not
// yet named, for the caller to commit() with the others (or drop, which writes nothing).
GoldenCheck check_golden_deferred(const TensorView& actual, const std::string& path, std::size_t max_listed,
                                  bool update, std::unique_ptr<OutputFile>& pending);

}  // namespace dmlbits
