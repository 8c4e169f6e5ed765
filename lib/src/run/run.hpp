// One operation from operands to result, in memory: read the operands, validate, and execute
// on a backend, timing each phase. Private to the run layer: faces call run() (request.hpp),
// which decides between this and stream_operation (stream.hpp).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "make_backend.hpp"
#include "operand.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/timing.hpp"
#include "validate.hpp"

namespace dmlbits {

struct OperationSpec {
  OpKind op{};
  std::vector<Operand> operands;  // as on the command line (paths, "-", literals), or borrowed tensors
  FeatureLevel level = newest_feature_level();
  std::optional<DType> out_dtype;
  std::optional<DType> dtype;  // for literals and JSON without a dtype
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
  bool in_place = false;       // the output overwrites input A's buffer
  BackendKind backend = BackendKind::cpu;
  std::string isa;             // force a lower instruction set on CPU backends ("" = best)
  unsigned threads = 0;        // CPU backends: BackendOptions::threads (0 = the default)
  std::string adapter;         // d3d12 and auto: BackendOptions::adapter ("" = the default)
  int warmup = 0;              // untimed runs before the measured ones
  int repeat = 1;              // measured runs (>= 1)
  bool explain_only = false;   // stop after validation
  // Write the result here (caller memory of the output's dtype and shape) instead of a new tensor.
  std::optional<MutableTensorView> output_buffer;
  RequestFace face = RequestFace::command_line;  // for the wording of output_buffer's refusal
  // false: the run measures nothing (no phases, no execute samples, no backend texts in its
  // timing): for a face that reports no timing, where a small call's clock reads and texts cost
  // more than its work (OperationRequest::timing).
  bool timed = true;
  // RunHooks::between_chunks: execute in chunks, calling it between them (may throw).
  std::function<void()> between_chunks;
  // RunHooks::allocate_result: where the output goes when there is neither in_place nor an
  // output_buffer (OperationResult::output_view then shows it, and `output` stays empty).
  std::function<MutableTensorView(DType, const Shape&)> allocate_result;
  BackendCache* backends = nullptr;  // where the backend comes from, if given
};

// A BackendCache's backends: one per (kind, isa, threads, adapter, large output for auto).
struct BackendCache::Impl {
  struct Key {
    BackendKind kind;
    std::string isa;
    unsigned threads;
    std::string adapter;
    bool large;
    // DMLBITS_ISA and DMLBITS_THREADS as they were when the backend was made, where isa and
    // threads left the choice to them ("" otherwise): read on every run, so that a changed
    // variable gets a backend of its own, as a new process would.
    std::string isa_variable;
    std::string threads_variable;
    bool operator==(const Key&) const = default;
  };
  // An operation the entry's backend accepted, kept so that the same operation on operands of
  // the same dtypes and shapes is not validated again: validate() is a pure function of the
  // request, and the backend's refusal (unsupported_reason) of the backend. Refusals are never
  // kept, so they are made, and worded, afresh.
  struct Validated {
    OpRequest request;
    std::shared_ptr<const ValidatedOp> op;
  };
  struct Entry {
    Key key;
    std::shared_ptr<Backend> backend;  // shared with the OperationPlans made on it
    std::vector<Validated> validated;  // at most kValidatedPerBackend: a linear search
    std::size_t next_replaced = 0;     // when full, replaced in turn
  };
  static constexpr std::size_t kValidatedPerBackend = 16;
  std::vector<Entry> backends;  // few: a linear search
};

struct OperationResult {
  std::shared_ptr<const ValidatedOp> op;  // shared with spec.backends' kept operations
  std::vector<LoadedOperand> inputs;
  TensorView output_view;  // the spec's output_buffer, or allocate_result's memory, when it had one
  Tensor output;        // empty when in_place (the result is inputs[0]) or with an output_buffer
  RunTiming timing;     // read, validate, execute (the first measured run)
  std::vector<double> execute_samples;  // seconds, one per measured run

  TensorView result() const;
  SampleStats execute_stats() const { return compute_stats(execute_samples); }
};

// prepare_request()'s rule for repeat, warmup and in place (OptionError), which
// run_operation also holds its callers to.
void check_repeat(int repeat, int warmup, bool in_place);

// Throws Error (usage, invalid_input, unsupported, io, backend) as the phases fail.
OperationResult run_operation(const OperationSpec& spec);

// The backend options `spec` gives (instruction set, threads, adapter), without the size hint.
BackendOptions backend_options(const OperationSpec& spec);

// The backend `spec` names, for these loaded operands: auto decides from the output's size;
// a device's creation shows in the backend's own phases. Shared by run_operation and
// stream_operation.
std::unique_ptr<Backend> make_operation_backend(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs);

// The backend for `spec` from spec.backends (created and kept there on first use; `*entry` is
// then its entry), or a new one held by `owned` (`*entry` null).
Backend& operation_backend(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs,
                           std::unique_ptr<Backend>& owned, BackendCache::Impl::Entry** entry = nullptr);

// validate_operation, or the operation `entry`'s backend accepted before for the same request
// (entry null: validated afresh).
std::shared_ptr<const ValidatedOp> validated_operation(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs,
                                                       const Backend& backend, BackendCache::Impl::Entry* entry);

// DMLBITS_ISA's and DMLBITS_THREADS' values where `isa` ("") and `threads` (0) leave the
// choice to them, else "" (BackendCache::Impl::Key).
std::string isa_variable(const std::string& isa);
std::string threads_variable(unsigned threads);

// The validation step shared by run_operation and stream_operation: the spec's operation on
// the loaded operands, refused (Errc::unsupported) if `backend` cannot run it.
ValidatedOp validate_operation(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs,
                               const Backend& backend);

}  // namespace dmlbits
