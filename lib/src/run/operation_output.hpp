// One operation from its operands to its output, for every face: run() (dmlbits/request.hpp)
// learns where the output goes, starts the run (start_run: read, backend, validate) and finishes
// it either straight into an .npy output chunk by chunk (finish_streamed) or whole in memory,
// then written (finish_in_memory).
#pragma once

#include "dmlbits/request.hpp"
#include "run_types.hpp"

namespace dmlbits {

// Where a file output goes and as what: without a path, JSON on standard output; "-" and devices
// default to .npy. Refuses (Errc::usage) an output whose format cannot be told, and binary .npy
// to a terminal. In place, the format is A's, from its header.
OutputTarget output_target(const OperationRequest& request);

// The rule run() follows: the result goes straight to its output, chunk by chunk, when it goes
// to a file as .npy, nothing needs it whole in memory (no keep_result, no before_write, not
// explain_only), and the operation runs once (repeat 1, warmup 0).
bool output_streams(const PreparedRequest& request, const RunHooks& hooks, TensorFormat target_format);

}  // namespace dmlbits
