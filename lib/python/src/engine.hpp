// The Python face's one door to the library: the keyword options of a call turned into a
// request, checked, and run on a cached backend in chunks, so that the calling thread can look
// for Ctrl-C between them; and the tool's other services (files, comparison, descriptors).
// engine.cpp is the only file of the binding that includes library headers beyond the ones
// issue #24 keeps public (ops, tensor, dtype, error, check, devices): validate, make_backend,
// Backend, io, compare, dml_desc, stats. When #24's OperationRequest and run land, it becomes
// calls of them, and nothing else of the binding changes.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"       // lib/src/ops: until the binding runs through dmlbits/request.hpp's run()
#include "make_backend.hpp"  // lib/src/run: the same
#include "dmlbits/operand.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/tensor.hpp"
#include "dmlbits/timing.hpp"
#include "dmlbits/validate.hpp"

namespace dmlbits::python {

// The options of one call, as Python gives them (None = ""/0/nullopt), parsed and checked once
// and cached by the package (dmlbits/_core.py), so that a small call does not parse strings.
struct RunOptions {
  BackendKind backend = BackendKind::automatic;
  std::string isa;
  std::string adapter;
  unsigned threads = 0;
  FeatureLevel level = newest_feature_level();
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
  std::optional<DType> out_dtype;
  std::uint64_t id = 0;  // distinct per RunOptions object: the key of the backend cache
};

// Throws Errc::usage for an unknown backend, level, shift rule, dtype, instruction set, or an
// option the backend does not take (the CLI's messages).
RunOptions make_run_options(const std::string& backend, const std::string& feature_level,
                            const std::string& shift_overflow, const std::string& out_dtype, unsigned threads,
                            const std::string& isa, const std::string& adapter);

// The backend these options name, for operands of these dtypes and shapes (auto decides from
// the output's size), created once per thread and options and reused: creating a D3D12 device
// costs tens of milliseconds, and a 4x4 call should cost about a microsecond.
Backend& backend_for(const RunOptions& options, const std::vector<OperandInfo>& operands);

// The operation on these operands, refused (Errc::invalid_input, Errc::unsupported) as the
// CLI refuses it.
ValidatedOp validate_call(OpKind op, const RunOptions& options, const std::vector<OperandInfo>& operands,
                          bool in_place, const Backend& backend);

// Operands written as on the command line (literals: "5", "0xff", "[1,2]"; the package turns
// Python ints and lists into such text), read with the CLI's rules and messages ("operand B
// (literal '0x1ff'): ..."): each takes the dtype of `dtype` or else `anchor` (the dtype of an
// array operand). `texts` has an entry per operand, "" where the operand is an array.
// Returns a tensor per non-empty entry, in order.
std::vector<Tensor> read_literals(const std::vector<std::string>& texts, std::optional<DType> dtype,
                                  std::optional<DType> anchor);

// Runs `op` on `buffers`; when the operation allows it (no axis broadcast), in chunks of about
// kChunkBytes, calling `between_chunks` after each but the last (it may throw to stop the run).
inline constexpr std::uint64_t kChunkBytes = std::uint64_t{64} << 20;
void execute(Backend& backend, const ValidatedOp& op, const ExecuteBuffers& buffers,
             const std::function<void()>& between_chunks);

// A tensor file (.npy or JSON, "-" is not offered) as the CLI reads it; `dtype` for JSON
// without one. Errors carry "reading 'PATH'".
Tensor read_tensor_path(const std::string& path, std::optional<DType> dtype);
// Writes `t` atomically as `format` ("npy", "json") or, when empty, as the extension says.
void write_tensor_path(const TensorView& t, const std::string& path, const std::string& format, bool hex);
// nullopt when `actual` has `expected`'s dtype, shape and bits; else the --expect report.
std::optional<std::string> compare_bits(const TensorView& actual, const TensorView& expected, std::size_t max_listed,
                                        const std::string& label);
// The --explain JSON of a validated operation.
std::string explain_json_text(const ValidatedOp& op);
// Statistics of timing samples as --time-json writes them ("stats_s"), and their median.
struct SampleStatsJson {
  std::string json;
  double median = 0;
};
SampleStatsJson sample_stats_json(const std::vector<double>& samples);

}  // namespace dmlbits::python
