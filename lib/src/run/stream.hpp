// Running an operation straight into an .npy output, in chunks: full-size .npy inputs are read
// a chunk at a time, computed and written out (on one thread in order; or, for large runs, on
// several: each reading, computing and writing a slice of the chunks at their offsets, or one
// reading and computing while the other writes in order), so memory use does not grow with the
// tensor (at most one chunk in flight per thread, two in the pipeline, each at most 512 KiB per
// input and for the output).
// Inputs that need conversion (big-endian, Fortran order, JSON) are converted in memory first and
// then read a chunk at a time like the others (LoadedOperand::chunk); operations that broadcast
// along an axis are run in memory by the same function.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "run.hpp"

namespace dmlbits {

// Called after each chunk with elements done and the total; may throw to abort (RunHooks::progress).
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Bytes per chunk of the widest of the inputs and the output. Small enough that a chunk's
// buffers stay in the caches between the read, the kernel and the write, large enough that
// the system calls per chunk do not show.
inline constexpr std::size_t kStreamChunkBytes = std::size_t{512} << 10;

// Output bytes from which a streamed run with one streamed input, and output elements as wide as
// its input's, reads and computes on a second thread while the first writes (stream.cpp,
// thread_choice). Under it the pipeline's hand-over per chunk cost more than the overlap saved
// (testdata/benchmarks.md, "Issue #29").
inline constexpr std::uint64_t kPipelineMinOutputBytes = std::uint64_t{64} << 20;

// Output bytes from which a streamed run whose streamed inputs are regular files and whose
// output is a new file splits its chunks in slices, each read, computed and written at its
// offsets by its own thread (stream.cpp, thread_choice): two (halves) from here, and one more per
// half of it (8 MiB) up to the backend's threads. Under it halves lost, from it they did not
// (testdata/benchmarks.md, "Fifth pass").
inline constexpr std::uint64_t kHalvesMinOutputBytes = std::uint64_t{16} << 20;

// How a streamed run is carried out; the defaults are the product's. Tests lower the thresholds
// to reach the two-thread paths with small files (no user-visible knob sets them).
struct StreamOptions {
  std::uint64_t pipeline_min_output_bytes = kPipelineMinOutputBytes;
  std::uint64_t halves_min_output_bytes = kHalvesMinOutputBytes;
};

// Finishes `run` (started with LoadMode::streams, timed; repeat and warmup must be 1 and 0,
// checked by prepare_request) and writes the result as .npy to `out_path` ("-" for standard
// output) atomically. `output_at_offsets`: whether the output will be a new file (not "-", a
// device or a FIFO), which slices can write at offsets; known before it is created, for the
// device's description. hooks.on_validated runs before any output is created (for -v and
// --explain-json); hooks.progress after each chunk. RunResult's phases: read, backend, validate,
// execute, write, each summed over the chunks, and one execute sample (the execute phase);
// `streamed` is false where the operation broadcasts along an axis and ran in memory (computed
// before its output is created).
RunResult finish_streamed(const PreparedRequest& request, StartedRun&& run, const std::string& out_path,
                          bool output_at_offsets, const RunHooks& hooks = {}, const StreamOptions& options = {});

// start_run (LoadMode::streams, no BackendCache) and finish_streamed, the output probed for
// output_at_offsets.
RunResult stream_operation(const PreparedRequest& request, const std::string& out_path, const RunHooks& hooks = {},
                           const StreamOptions& options = {});

}  // namespace dmlbits
