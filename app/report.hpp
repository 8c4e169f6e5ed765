// All of dmlbits' human- and machine-readable output formatting.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dmlbits/feature_level.hpp"
#include "dmlbits/io.hpp"
#include "dmlbits/stats.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits::app {

struct FileInfo {
  std::string path;
  TensorFormat format{};
  std::string version;  // "1.0" for .npy, "" for JSON
  std::optional<DType> dtype;
  std::string descr;    // .npy descr as written
  bool is_bool = false;
  Shape shape;
  std::string byte_order;  // "little", "big", "not applicable", "native"
  bool fortran_order = false;
  std::uint64_t header_bytes = 0;
};

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
