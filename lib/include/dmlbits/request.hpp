// One operation, as every face asks for it: the command line's operator verbs, the cases of a
// `check` manifest and the Python module each turn their own syntax (argv, JSON, keywords) into
// an OperationRequest and nothing more. prepare_request() is the one place that knows which
// options go together and what their defaults are; run() is the one entry point that executes
// a prepared request, decides whether it streams or runs in memory, and returns one RunResult.
//
// Contract:
// - prepare_request() reads nothing but the request and, once, the environment variables that
//   stand for the options the request leaves (DMLBITS_ISA, DMLBITS_THREADS; nothing downstream
//   reads them again): no operand is opened, no device created. It
//   throws Error(Errc::usage) for a combination a face must refuse before any work (an
//   option's value or combination as an OptionError, which the face words: error.hpp),
//   and Errc::unsupported for an instruction set this CPU lacks.
// - run() accepts only a PreparedRequest. It throws Error as the phases fail (usage for operands
//   read twice from standard input, invalid_input, unsupported, io, backend, interrupted); a file
//   output is then left as it was. It never prints and never exits.
// - Borrowed operands are read in place, never copied, when C-contiguous; they must stay alive
//   and unchanged until run() returns. A result asked for in memory comes back as an owning,
//   64-byte-aligned Tensor that the caller may keep (the Python module hands it to NumPy).
//
// The options' values and their parsers are in dmlbits/options.hpp, the backends kept between
// runs and the plans of small operations in dmlbits/plan.hpp, what dmlbits can run on in
// dmlbits/devices.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/options.hpp"
#include "dmlbits/tensor.hpp"
#include "dmlbits/timing.hpp"

namespace dmlbits {

class BackendCache;  // dmlbits/plan.hpp

// Operands are Operand values (tensor.hpp): text as on the command line, or a BorrowedTensor
// (a NumPy buffer: dtype, shape, byte strides, data), read in place when C-contiguous.

// Where the result goes.
enum class OutputKind : std::uint8_t {
  automatic,  // the face's default: a file if `path` is set, else JSON on standard output
  file,       // `path` ("-" for standard output), as `format` or from its name
  memory,     // RunResult::result, an owning Tensor
  buffer,     // written into `buffer` (caller memory of the output's dtype and shape)
  none,       // computed and discarded (for timing), or compared by the caller via keep_result
};

struct OperationRequest {
  OpKind op{};
  std::vector<Operand> operands;  // the operator's arity of them (an expression: one per name)
  // An expression of the operators in place of `op` (dmlbits(1), EXPRESSIONS: "popcount(a ^ b)"),
  // run as one graph: names[i] is the expression's name that operands[i] binds. Every name of the
  // expression is bound once and every binding is used; an operand that is a literal is that
  // literal in the expression. Not with in_place.
  std::string expression;
  std::vector<std::string> names;
  std::optional<FeatureLevel> level;            // default: newest_feature_level()
  std::optional<DType> dtype;                   // literals and JSON inputs that name none
  std::optional<DType> out_dtype;               // popcount only: UINT8 (default) or UINT32
  std::optional<ShiftOverflow> shift_overflow;  // shl and shr only: default kDefaultShiftOverflow
  bool in_place = false;                        // write over operand A (a file, or a borrowed tensor's memory)

  std::optional<BackendKind> backend;  // default: automatic
  std::string isa;  // CPU backends: this instruction set only ("" = per-operation choice, or DMLBITS_ISA)
  std::optional<std::string> adapter;  // adapter backends: an index or part of a name (present but empty is refused)
  std::optional<unsigned> threads;  // CPU backends: 1..kMaxThreads (default: DMLBITS_THREADS, else the machine's CPUs:
                                    // dmlbits(1), --threads)

  int repeat = 1;             // measured executions (>= 1)
  int warmup = 0;             // unmeasured executions first (>= 0)
  bool explain_only = false;  // stop after validation
  // false: the run measures nothing, for a face that reports no timing (Python without
  // timing=True): RunResult::timing has no phases, backend texts or totals and execute_samples
  // is empty. A small in-memory call then reads no clock. RunHooks::on_validated still gets the
  // backend texts.
  bool timing = true;

  OutputKind output = OutputKind::automatic;
  std::string path;                         // OutputKind::file / automatic
  std::optional<TensorFormat> format;       // default: from the path's extension; "-" and devices: npy
  bool hex = false;                         // JSON output: bit patterns in hex
  std::optional<MutableTensorView> buffer;  // OutputKind::buffer
  bool keep_result = false;                 // also return the result in memory (to compare it with a golden)
};

// A request whose combination rules held and whose defaults are filled: every optional above
// that has a default is set, and the options are resolved into typed values, the environment
// variables that stand for them included (read once, by prepare_request(): a run of this request
// reads the environment no more, so a later change of DMLBITS_ISA or DMLBITS_THREADS leaves it
// as it is). Only prepare_request() makes one.
class PreparedRequest {
 public:
  const OperationRequest& request() const { return r_; }
  BackendKind backend() const { return *r_.backend; }
  FeatureLevel level() const { return *r_.level; }
  ShiftOverflow shift_overflow() const { return *r_.shift_overflow; }
  // The CPU backends' instruction set: the request's isa, else DMLBITS_ISA's (this CPU runs it);
  // none: the host's widest set with the per-operation choice.
  std::optional<InstructionSet> isa() const { return isa_; }
  // The CPU backends' (and the d3d12 backend's copies') thread count: the request's threads, else
  // DMLBITS_THREADS' (1 to kMaxThreads); 0: the machine's default (thread_defaults()).
  unsigned threads() const { return threads_; }
  // Whether the request is an expression (OperationRequest::expression).
  bool is_expression() const { return expression_ != nullptr; }

 private:
  friend PreparedRequest prepare_request(OperationRequest request);
  friend struct PreparedAccess;  // the library's: the parsed expression
  PreparedRequest(OperationRequest r, std::optional<InstructionSet> isa, unsigned threads)
      : r_(std::move(r)), isa_(isa), threads_(threads) {}
  OperationRequest r_;
  std::optional<InstructionSet> isa_;
  unsigned threads_ = 0;
  std::shared_ptr<const void> expression_;  // the parsed expression, its names bound
};

// Checks the combination rules and fills the defaults; see the contract at the top.
PreparedRequest prepare_request(OperationRequest request);

// The names an expression (OperationRequest::expression) binds, in order of first appearance:
// what a face that finds its operands by name (Python's dmlbits.evaluate) must look up. Throws
// Error(Errc::usage) for text the grammar refuses, with the message prepare_request() gives.
std::vector<std::string> expression_names(const std::string& expression);

// What was validated, as plain data for reports (-v, --time, a Python repr).
struct OperationSummary {
  OpKind op{};
  FeatureLevel level;
  DType input_dtype{};
  DType output_dtype{};
  Shape output_shape;
  bool in_place = false;
  // An expression's text ("" for one operator); `op`, the dtypes and the level are then its
  // last operator's, `input_dtype` that operator's input.
  std::string expression;
};

// An operation as run() validated it: the operator, its DirectML description, dtypes and shapes.
// A handle: copies share the one operation, which lives as long as any copy. Only the library
// makes a non-empty one (RunResult::op, the RunHooks, OperationPlan::op()).
class Operation {
 public:
  Operation() = default;  // empty: describes nothing (a RunResult before run() fills it)
  explicit operator bool() const { return impl_ != nullptr; }
  // Not empty. The operation as plain data.
  OperationSummary summary() const;
  // Not empty. Its DirectML operator description as JSON text (what --explain prints), indented
  // by 2, with a final newline.
  std::string explain_json() const;

 private:
  friend struct OperationAccess;  // the library's
  std::shared_ptr<const void> impl_;
};

// What a face may watch while run() works.
struct RunHooks {
  // Once the operation is validated and the backend chosen (timing.backend, .device, .selection
  // are set), before any output is created.
  std::function<void(const Operation&, const RunTiming&)> on_validated;
  // In memory, after execution and before the output is written: the inputs as read (in place,
  // inputs[0] already holds the result). Setting it keeps the run in memory.
  std::function<void(const Operation&, std::span<const TensorView> inputs)> before_write;
  // A streamed run's progress: elements done of the total; may throw to abort.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  // Per-call cancellation for an in-memory run: when set, the execution is split into chunks of
  // about kInMemoryChunkBytes (where the operation allows it: no axis broadcast) and this is
  // called between chunks and between warm-up and measured executions, never after the last.
  // It may throw (Error(Errc::interrupted), or the face's own exception) to stop the run, which
  // run() then rethrows; the run's own memory is released, a caller's buffer is left partly
  // written. Unlike request_interrupt() (error.hpp), it stops only this call: the Python
  // module checks for Ctrl-C here on the calling thread, leaving other threads' runs alone.
  std::function<void()> between_chunks;
  // OutputKind::memory: the memory of the result, once its dtype and shape are known (after
  // validation, before the execution), from the face's own allocator: the Python module's
  // results are NumPy's arrays, allocated by NumPy as its own results are. The view it returns
  // must have that dtype and shape. RunResult::result then stays empty. May throw, as
  // between_chunks.
  std::function<MutableTensorView(DType, const Shape&)> allocate_result;
};

// The chunk size of an in-memory run with RunHooks::between_chunks: bytes read and written per
// chunk (about 0.1 s of work at a few GB/s, so that an interruption is seen promptly).
inline constexpr std::uint64_t kInMemoryChunkBytes = std::uint64_t{64} << 20;

struct RunResult {
  Operation op;  // what was validated: op.summary(), op.explain_json()
  // Consecutive phases adding up to total_seconds: read, backend, validate, [allocate, warmup,]
  // execute, write.
  RunTiming timing;
  std::vector<double> execute_samples;  // seconds, one per measured run
  std::optional<Tensor> result;         // OutputKind::memory (without allocate_result), or keep_result
  bool streamed = false;                // the result went to its file chunk by chunk
  int warmup = 0;                       // the unmeasured executions before the samples
};

// `backends`, when given, supplies (and keeps) the backend of an in-memory run.
RunResult run(const PreparedRequest& request, const RunHooks& hooks = {}, BackendCache* backends = nullptr);

// The run's timing as JSON text indented by 2 with a final newline: what --time-json writes and
// Python's timing=True returns (op, dtype, shape, feature_level, backend, device, selection,
// phases, backend_phases, total_s, execute_bytes, execute_runs, execute_gbps, and execute:
// warmup, samples_s, backend_phases (the measured runs' own, warm-ups left out), stats_s,
// gbps_at_median). The one writer of that format.
std::string timing_json(const RunResult& result);

// --emit-dxdispatch: the operation as a model for Microsoft's DxDispatch tool, to reproduce it on
// real DirectML (lib/src/run/dxdispatch.hpp describes the model). The files for FILE (a
// trailing ".json" is dropped first): FILE.json (the model), FILE-a.npy[, FILE-b.npy] (the
// inputs as dmlbits read them) and FILE-out.npy, which DxDispatch writes, never dmlbits.
struct DxDispatchFiles {
  std::string model;                // FILE.json
  std::vector<std::string> inputs;  // FILE-a.npy[, FILE-b.npy]; an expression's FILE-NAME.npy
  std::string output;               // FILE-out.npy (DxDispatch writes it)
};

// The paths for FILE and an operator of `arity` inputs. Throws Errc::usage for "-" or a FILE
// without a file name ("dir/").
DxDispatchFiles dxdispatch_file_names(const std::string& file, int arity);
// The paths for FILE and an expression's operands (those bound to no literal), FILE-NAME.npy
// each, in the order given. Throws Errc::usage as above, and for a name "out" or two names
// equal but for case (in any case): their files would be FILE-out.npy, or one file on
// Windows, where DxDispatch runs.
DxDispatchFiles dxdispatch_file_names(const std::string& file, const std::vector<std::string>& input_names);

}  // namespace dmlbits
