// One operation from operands to result, the steps every run shares (start_run: read the
// operands, make the backend, validate) and the in-memory rest (execute on the backend, write
// the result), timing each phase. Private to the run layer: faces call run() (request.hpp),
// which starts the run and then finishes it in memory or streamed (stream.hpp).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dmlbits/plan.hpp"
#include "dmlbits/request.hpp"
#include "make_backend.hpp"
#include "operand.hpp"
#include "operation_access.hpp"
#include "run_types.hpp"
#include "graph.hpp"
#include "validate.hpp"

namespace dmlbits {

// The phases of a run as it measures them. Off (an untimed run), no clock is read (time points
// rather than Stopwatches, which read the clock when made) and every lap is 0.
class PhaseClock {
 public:
  explicit PhaseClock(bool on) : on_(on) {
    if (on) start_ = last_ = std::chrono::steady_clock::now();
  }
  bool on() const { return on_; }
  // Seconds since the previous lap, or the start.
  double lap() {
    if (!on_) return 0;
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }
  // The same, kept as `timing`'s next phase (nothing when off).
  void lap(RunTiming& timing, const char* name) {
    if (on_) timing.phases.push_back({name, lap()});
  }
  double total_seconds() const {
    return on_ ? std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() : 0;
  }

 private:
  bool on_ = false;
  std::chrono::steady_clock::time_point start_{}, last_{};
};

// The backend for `p` from `backends` (created and kept there on first use; `entry` is then its
// entry), or, without a cache, a new one held by `owned` (`entry` null). For automatic, the
// operands' sizes choose between the small and the large outputs' backends.
Backend& operation_backend(const PreparedRequest& p, const std::vector<LoadedOperand>& inputs, BackendCache* backends,
                           std::unique_ptr<Backend>& owned, CachedBackends::Entry*& entry);

// The memory a result of `dtype` and `shape` goes to: the request's buffer (OutputKind::buffer:
// OptionError(out, wrong_dtype / wrong_shape) when it is not of them), the face's
// (hooks.allocate_result, checked), or `owned`, allocated here.
MutableTensorView result_memory(const OperationRequest& spec, const RunHooks& hooks, DType dtype, const Shape& shape,
                                Tensor& owned);

// A run after the steps every run takes first, in memory or streamed.
struct StartedRun {
  explicit StartedRun(bool timed) : clock(timed) {}
  RunResult result;                   // result.op is the validated operation
  std::vector<LoadedOperand> inputs;  // as read (LoadMode); an expression's in the order of its names
  // What runs: an expression's graph, or the operator as a graph of one node (single_node_graph).
  // Every run, of one operator or of an expression, takes the same path from here.
  std::shared_ptr<const ValidatedGraph> graph;
  std::vector<Tensor> constants;   // per graph->constants(): an expression's literals as read
  Backend* backend = nullptr;      // `owned`, or the BackendCache's (`cached`)
  std::unique_ptr<Backend> owned;  // made for this run: no BackendCache was given
  CachedBackends::Entry* cached = nullptr;
  PhaseClock clock;  // running since before the operands were read
};

// Reads `request`'s operands (`mode`), makes its backend (or takes it from `backends`, where
// given, which keeps it) and validates the operation on them (validated_operation), or, for an
// expression, its graph (start_expression_run, evaluate.hpp). With
// `timed`: result.timing has the phases read, backend and validate and the backend's name,
// selection and threads; the device is described by the caller, which knows how the run will
// use it. Throws Error as the steps fail (invalid_input, unsupported, io, backend, usage).
StartedRun start_run(const PreparedRequest& request, LoadMode mode, BackendCache* backends, bool timed);

// How an in-memory run reads its operands: borrowed operands in another layout or byte order
// are converted during the execution where it runs once, untimed (a timed run measures the
// kernels alone), else before.
LoadMode in_memory_load_mode(const PreparedRequest& request, const RunHooks& hooks);

// Whether a run of `request` with these hooks measures its phases: a face that reports no
// timing, and watches nothing, has none measured (no clock is read; OperationRequest::timing).
bool run_is_timed(const PreparedRequest& request, const RunHooks& hooks);

// Finishes `run` (started with in_memory_load_mode and run_is_timed) in memory and writes its
// result to `target()`, if given: called at most once, after hooks.before_write and
// hooks.on_validated (never with explain_only); what it throws, this throws. RunResult's phases
// add up to its total: read, backend, validate, [allocate, warmup,] execute, write, where
// "write" is everything after the execution (before_write, on_validated, creating and writing
// the output). With explain_only: read, backend and validate only; untimed: no phases, no
// backend texts. The result is returned in memory for keep_result, and for OutputKind::memory
// without hooks.allocate_result. Throws Error (invalid_input, unsupported, io, backend, usage for
// an output buffer a face must refuse) as the phases fail.
RunResult finish_in_memory(const PreparedRequest& request, StartedRun&& run, const RunHooks& hooks = {},
                           const std::function<OutputTarget()>& target = {});

// start_run and finish_in_memory: `backends`, when given, supplies the backend.
RunResult run_operation(const PreparedRequest& request, const RunHooks& hooks = {}, BackendCache* backends = nullptr,
                        const std::function<OutputTarget()>& target = {});

// The backend `request` names, for these loaded operands: auto decides from the output's size;
// a device's creation shows in the backend's own phases.
std::unique_ptr<Backend> make_operation_backend(const PreparedRequest& request,
                                                const std::vector<LoadedOperand>& inputs);

// Elements [first, first + count) of an operand (an input or a constant) of a flat graph whose
// output has the shape `output`: cut where the operand has that shape, the same one element
// where it has one (is_flat_streamable).
std::span<const std::byte> flat_cut(std::span<const std::byte> bytes, DType dtype, const Shape& shape,
                                    const Shape& output, std::uint64_t first, std::uint64_t count);

// run_graph_once runs `graph` on `backend` once: a graph of one node as its operator
// (Backend::run), any other by Backend::run_graph (fused where the backend fuses).
// execute_graph runs it once as well; with between_chunks, a flat graph in chunks of about kInMemoryChunkBytes read and
// written (each chunk's output at least an eighth of that), the hook called between them, so that a face sees an
// interruption promptly.
void run_graph_once(Backend& backend, const ValidatedGraph& graph, const GraphBuffers& buffers);
void execute_graph(Backend& backend, const ValidatedGraph& graph, const GraphBuffers& buffers,
                   const std::function<void()>& between_chunks = {});

// The request's operation on the loaded operands, refused (Errc::unsupported) if `backend`
// cannot run it.
ValidatedOp validate_operation(const PreparedRequest& request, const std::vector<LoadedOperand>& inputs,
                               const Backend& backend);

}  // namespace dmlbits
