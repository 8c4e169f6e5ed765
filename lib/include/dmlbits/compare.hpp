// Bit-exact comparison of a result with an expected (golden) tensor, with a report a person can
// act on: dtype and shape differences first, then the differing elements with their
// multi-dimensional index, both values in decimal and hex, and the differing bits.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dmlbits/tensor.hpp"

namespace dmlbits {

class OutputFile;

struct ElementMismatch {
  std::uint64_t flat_index = 0;
  std::vector<std::uint64_t> index;  // multi-dimensional, C order
  std::uint64_t expected = 0;        // bits, zero-extended
  std::uint64_t actual = 0;
};

struct CompareReport {
  DType expected_dtype{}, actual_dtype{};
  Shape expected_shape, actual_shape;
  bool dtype_differs = false;
  bool shape_differs = false;
  std::uint64_t elements = 0;           // compared (0 when dtype or shape differ)
  std::uint64_t differing = 0;          // elements whose bits differ
  std::vector<ElementMismatch> listed;  // the first `max_listed` differing elements

  bool equal() const { return !dtype_differs && !shape_differs && differing == 0; }
};

// Compares bit patterns (so NaN == NaN when the payload is the same, and -0.0 != 0.0).
CompareReport compare_tensors(const TensorView& expected, const TensorView& actual, std::size_t max_listed);

// A readable report; `label` names the golden file. At most `max_shown` of the listed elements
// are shown (a report listed in full for JSON is shown as --show asks).
std::string compare_text(const CompareReport& r, const std::string& label,
                         std::size_t max_shown = static_cast<std::size_t>(-1));
nlohmann::json compare_json(const CompareReport& r);

// The outcome of checking a result against a golden file.
struct GoldenCheck {
  enum class Outcome { matched, differed, updated };
  Outcome outcome = Outcome::matched;
  CompareReport report;  // empty when the golden was missing or unreadable and was created
  bool created = false;  // updated, and there was no golden file before
  // With defer_update: the new golden, complete but not yet named; commit() it, or drop it
  // and nothing was written.
  std::shared_ptr<OutputFile> pending;
};

// Compares `actual` with the tensor in the golden file `path`. With `update`, a golden that
// differs, is missing or cannot be read is (re)written with `actual`, atomically, in the
// golden's own format (or its extension's for a new file; .npy if it has none). Without
// `update`, an unreadable golden throws its read error. Shared by --expect and `dmlbits check`.
// With `defer_update`, the new golden is prepared (GoldenCheck::pending) and left for the
// caller to commit with others, so that a run updates all its goldens or none.
GoldenCheck check_golden(const TensorView& actual, const std::string& path, std::size_t max_listed, bool update,
                         bool defer_update = false);

}  // namespace dmlbits
