// Running an operation straight into an .npy output, in chunks: full-size .npy inputs are read
// a chunk at a time and each chunk's result is written before the next is read, so memory use
// does not grow with the tensor (a few chunk buffers, about 8 MiB each). Operations that
// broadcast along an axis, and inputs that need conversion (big-endian, Fortran order, JSON),
// are run in memory by the same function.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dmlbits/run.hpp"

namespace dmlbits {

// Called after each chunk with elements done and the total; may throw to abort.
using ProgressFn = std::function<void(std::uint64_t done, std::uint64_t total)>;

struct StreamResult {
  std::unique_ptr<ValidatedOp> op;
  RunTiming timing;  // read, validate, execute, write: each summed over the chunks
  bool streamed = false;  // false: the operation ran in memory
};

// Output bytes per chunk.
inline constexpr std::size_t kStreamChunkBytes = std::size_t{8} << 20;

// Runs `spec` (repeat and warmup must be 1 and 0) and writes the result as .npy to `out_path`
// ("-" for standard output) atomically. `on_validated` runs once the operation is validated and
// before any output is created (for -v and --explain-json).
StreamResult stream_operation(const OperationSpec& spec, const std::string& out_path, const ProgressFn& progress,
                              const std::function<void(const ValidatedOp&, const RunTiming&)>& on_validated = {});

}  // namespace dmlbits
