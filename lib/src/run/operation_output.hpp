// One operation from its operands to its output, for the operator verbs: the library decides
// whether the result goes straight to an .npy output chunk by chunk (stream_operation) or is
// computed whole in memory (run_operation) and then written, and counts the writing among the
// run's phases. The caller says what it needs; it parses and prints.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "io.hpp"
#include "json_tensor.hpp"
#include "run.hpp"
#include "stream.hpp"

namespace dmlbits {

// Where a result is written.
struct OutputTarget {
  OutputTarget(std::string to, TensorFormat as, JsonWriteOptions json_options = {})
      : path(std::move(to)), format(as), json(json_options) {}

  std::string path;  // a file (written atomically), or "-" for standard output
  TensorFormat format;
  JsonWriteOptions json;  // TensorFormat::json only
};

// What the caller needs from run_to_output besides the timing.
struct OutputRequest {
  // Where the result goes; empty when it is written nowhere. Called at most once: before
  // anything is read when the run could stream (to learn the format, so that a target the
  // callback refuses fails before the work), else after the run, after on_validated. What it
  // throws, run_to_output throws.
  std::function<OutputTarget()> target;
  // The caller needs the whole result in memory afterwards (to compare it): the run is not
  // streamed, and the result is returned.
  bool keep_result = false;
  // Called with the in-memory run once it has executed (with spec.explain_only, once it is
  // validated) and before anything else, its time counted as writing: for side outputs that
  // need the inputs as read (in place, inputs[0] holds the result by then). Setting it keeps
  // the run in memory, since a streamed run keeps no inputs.
  std::function<void(const OperationResult&)> before_write;
  // Called once the operation is validated and before the output is created, with the
  // backend's name, device and selection in the timing: in a streamed run before anything
  // executes, in memory after the run and before_write. Not called with spec.explain_only.
  std::function<void(const ValidatedOp&, const RunTiming&)> on_validated;
  // A streamed run's progress; an in-memory run reports none.
  ProgressFn progress;
};

struct OutputRun {
  std::shared_ptr<const ValidatedOp> op;
  // Consecutive phases adding up to total_seconds: read, backend, validate, [allocate,
  // warmup,] execute, write. In memory, "write" is everything after the execution:
  // before_write, on_validated, creating and writing the output; streamed, it is creating and
  // writing the output (on_validated counts as reading). With spec.explain_only: read, backend
  // and validate only. Without spec.timed: no phases, no backend texts.
  RunTiming timing;
  std::vector<double> execute_samples;  // seconds, one per measured run (a streamed run: its execute phase)
  std::optional<Tensor> result;         // the whole result, with keep_result (and not explain_only)
  bool streamed = false;                // the result went to the output chunk by chunk
};

// The rule run_to_output follows: the result goes straight to its output, chunk by chunk, when
// nothing needs it whole in memory (no keep_result, no before_write, not spec.explain_only),
// the operation runs once (repeat 1, warmup 0), and the output is .npy.
bool output_streams(const OperationSpec& spec, const OutputRequest& request, TensorFormat target_format);

// Runs `spec` and writes its result to request.target, if any, streamed or in memory as
// output_streams says. Throws Error as run_operation, stream_operation and write_tensor do; a
// file output is then left as it was.
OutputRun run_to_output(const OperationSpec& spec, const OutputRequest& request);

}  // namespace dmlbits
