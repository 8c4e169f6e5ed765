// All of dmlbits' human- and machine-readable output formatting.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dmlbits/ops.hpp"
#include "dmlbits/tensor.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits::app {

using FileInfo = TensorFileInfo;  // dmlbits/tensor.hpp

std::string info_text(const FileInfo& f);
nlohmann::json info_json(const FileInfo& f);

// The support matrix, from the operator table.
std::string ops_text(std::optional<FeatureLevel> level);
// The man page's table (tbl rows), so that a test can compare it with the man page.
std::string ops_roff();

// What was timed, so that timings can be compared across machines.
struct RunDescription {
  std::string op;
  DType dtype{};
  Shape shape;
  FeatureLevel level;
  int warmup = 0;
  std::vector<double> execute_samples;  // seconds
};

// --time's text. (--time-json's content is the library's timing_json(RunResult), request.hpp.)
std::string timing_text(const RunTiming& t, const RunDescription& what);

// "0 success, 1 mismatch, ..." for help footers.
std::string exit_status_summary();

}  // namespace dmlbits::app
