// One operation from operands to result, in memory: read the operands, validate, execute on a
// backend and write the result, timing each phase. Private to the run layer: faces call run()
// (request.hpp), which decides between this and stream_operation (stream.hpp).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dmlbits/request.hpp"
#include "make_backend.hpp"
#include "operand.hpp"
#include "run_types.hpp"
#include "validate.hpp"

namespace dmlbits {

// Runs `request` in memory and writes its result to `target()`, if given: called at most once,
// after hooks.before_write and hooks.on_validated (never with explain_only); what it throws,
// run_operation throws. RunResult's phases add up to its total: read, backend, validate,
// [allocate, warmup,] execute, write, where "write" is everything after the execution
// (before_write, on_validated, creating and writing the output). With explain_only: read,
// backend and validate only; untimed (OperationRequest::timing false and no on_validated): no
// phases, no backend texts. The result is returned in memory for keep_result, and for
// OutputKind::memory without hooks.allocate_result. `backends`, when given, supplies the backend.
// Throws Error (invalid_input, unsupported, io, backend, usage for an output buffer a face
// must refuse) as the phases fail.
RunResult run_operation(const PreparedRequest& request, const RunHooks& hooks = {}, BackendCache* backends = nullptr,
                        const std::function<OutputTarget()>& target = {});

// Whether a run of `request` with these hooks measures its phases: a face that reports no
// timing, and watches nothing, has none measured (no clock is read; OperationRequest::timing).
bool run_is_timed(const PreparedRequest& request, const RunHooks& hooks);

// The backend `request` names, for these loaded operands: auto decides from the output's size;
// a device's creation shows in the backend's own phases. Shared by run_operation and
// stream_operation.
std::unique_ptr<Backend> make_operation_backend(const PreparedRequest& request, const std::vector<LoadedOperand>& inputs);

// The backend for `request` from `backends` (created and kept there on first use; `*entry` is
// then its entry), or, without a cache, a new one held by `owned` (`*entry` null).
Backend& operation_backend(const PreparedRequest& request, const std::vector<LoadedOperand>& inputs,
                           BackendCache* backends, std::unique_ptr<Backend>& owned,
                           CachedBackends::Entry** entry = nullptr);

// validate_operation, or the operation `entry`'s backend accepted before for the same request
// (entry null: validated afresh).
std::shared_ptr<const ValidatedOp> validated_operation(const PreparedRequest& request,
                                                       const std::vector<LoadedOperand>& inputs,
                                                       const Backend& backend, CachedBackends::Entry* entry);

// DMLBITS_ISA's and DMLBITS_THREADS' values where `isa` ("") and `threads` (0) leave the
// choice to them, else "" (CachedBackends::Key).
std::string isa_variable(const std::string& isa);
std::string threads_variable(unsigned threads);

// The validation step shared by run_operation and stream_operation: the request's operation on
// the loaded operands, refused (Errc::unsupported) if `backend` cannot run it.
ValidatedOp validate_operation(const PreparedRequest& request, const std::vector<LoadedOperand>& inputs,
                               const Backend& backend);

}  // namespace dmlbits
