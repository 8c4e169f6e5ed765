// Running an operation straight into an .npy output, in chunks: full-size .npy inputs are read
// a chunk at a time, computed and written out in order (reading and computing the next chunk
// overlap with writing the last on a second thread), so memory use does not grow with the
// tensor (four chunks in flight, each at most 512 KiB per input and for the output).
// Inputs that need conversion (big-endian, Fortran order, JSON) are converted in memory first and
// then read a chunk at a time like the others (LoadedOperand::chunk); operations that broadcast
// along an axis are run in memory by the same function.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "run.hpp"

namespace dmlbits {

// Called after each chunk with elements done and the total; may throw to abort.
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct StreamResult {
  std::unique_ptr<ValidatedOp> op;
  RunTiming timing;  // read, validate, execute, write: each summed over the chunks
  bool streamed = false;  // false: the operation ran in memory
};

// Bytes per chunk of the widest of the inputs and the output. Small enough that a chunk's
// buffers stay in the caches between the read, the kernel and the write, large enough that
// the system calls per chunk do not show.
inline constexpr std::size_t kStreamChunkBytes = std::size_t{512} << 10;

// Output bytes from which a streamed run with one streamed input, and output elements as wide as
// its input's, reads and computes on a second thread while the first writes (stream.cpp,
// pipeline_choice). Under it the pipeline's hand-over per chunk cost more than the overlap saved
// (testdata/benchmarks.md, "Issue #29").
inline constexpr std::uint64_t kPipelineMinOutputBytes = std::uint64_t{64} << 20;

// How a streamed run is carried out; the defaults are the product's. Tests lower the pipeline's
// threshold to reach the two-thread path with small files (no user-visible knob sets it).
struct StreamOptions {
  std::uint64_t pipeline_min_output_bytes = kPipelineMinOutputBytes;
};

// Runs `spec` (repeat and warmup must be 1 and 0) and writes the result as .npy to `out_path`
// ("-" for standard output) atomically. `on_validated` runs once the operation is validated and
// before any output is created (for -v and --explain-json).
StreamResult stream_operation(const OperationSpec& spec, const std::string& out_path, const ProgressFn& progress,
                              const std::function<void(const ValidatedOp&, const RunTiming&)>& on_validated = {},
                              const StreamOptions& options = {});

}  // namespace dmlbits
