// What a face that makes many small calls keeps between them: the backends (BackendCache) and
// the validated small operations (OperationPlan), both made by run()'s rules
// (dmlbits/request.hpp).
#pragma once

#include <memory>
#include <optional>
#include <span>

#include "dmlbits/dtype.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits {

// Backends kept from one run to the next, so that a face running many small operations (the
// Python module) creates each backend once: a CPU backend's thread pool, a D3D12 device (tens
// of milliseconds). Keyed by what chooses a backend: kind, instruction set and threads as
// prepare_request() resolved them (so a changed DMLBITS_ISA or DMLBITS_THREADS gets a backend
// of its own), adapter, and for automatic whether the output is large (kAutoGpuMinBytes). A
// backend is created as run() would create it and used by in-memory runs only;
// a streamed run makes its own. Not thread-safe: a backend runs one operation at a time, so use
// one cache per thread (the Python module keeps one thread_local). Backends' own phases
// (RunTiming::backend_phases) then add up over the runs that share the backend.
class BackendCache {
 public:
  BackendCache();
  ~BackendCache();
  BackendCache(const BackendCache&) = delete;
  BackendCache& operator=(const BackendCache&) = delete;
  void clear();

 private:
  struct Impl;
  friend struct BackendCacheAccess;  // the library's
  std::unique_ptr<Impl> impl_;
};

// A small in-memory operation validated once and run again on new operands of the same dtypes
// and shapes, for a face that makes many small calls (the Python module: at 4x4, checking the
// request, choosing the backend and validating cost several times the work).
//
// Contract:
// - plan_operation() makes a plan only for a request that run() has accepted in the same form:
//   it does again what run() does before executing (reading the operands' dtypes and shapes,
//   the backend from `backends`, validation), throwing the same errors, and keeps nothing of a
//   refusal, so every refusal is made and worded afresh by run(). It returns nullopt for a
//   request outside a plan's scope: an operand that is not a C-order, native BorrowedTensor,
//   an output other than memory or buffer, in place, repeat + warmup above 1, timing,
//   explain_only or keep_result. A planned run is not split into chunks and calls no hook:
//   keep plans for small operations (the Python module: results of at most 4096 elements).
// - fits(operands, out, variables) says whether run() computes what run(request) would for
//   these operands and output: the operands the plan was made for in number, dtype and shape (C
//   order, native) and `out` of the result's dtype and shape, and `variables`
//   (read_option_variables(), of the variables its request left to them) what
//   prepare_request() read for the plan's request. Anything else (a refusal to word) is run()'s.
//   The plan keeps the options its request resolved; this overload reads no environment.
// - fits(operands, out) is the same with the variables read now, as a face that reads them on
//   every call needs (the Python module: a change applies to its next call), and cheaper than
//   read_option_variables(): the text of each is compared in place with the text last found to
//   fit, in one pass over the environment, and a text not yet seen is read the full way (a
//   value refused: false, for run() to word). The variables are read only where the plan's
//   request left them; the plan remembers the text found, so it is not for two threads at once.
// - run() writes the result of `operands` (which fits() accepted) into `out`, with everything
//   that depends only on the plan decided when it was made (for the CPU backend: the kernel,
//   its loop over the layout and the thread count of its size: one thread). The plan shares
//   its backend with `backends`: use it on the thread that uses that cache, one run at a time.
class OperationPlan {
 public:
  OperationPlan(OperationPlan&&) noexcept;
  OperationPlan& operator=(OperationPlan&&) noexcept;
  ~OperationPlan();

  Operation op() const;
  DType output_dtype() const;
  const Shape& output_shape() const;
  bool fits(std::span<const BorrowedTensor> operands, const MutableTensorView& out,
            const OptionVariables& variables) const;
  bool fits(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const;
  void run(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const;

 private:
  struct Impl;
  friend std::optional<OperationPlan> plan_operation(const PreparedRequest& request, BackendCache& backends);
  explicit OperationPlan(std::unique_ptr<Impl> impl);
  bool operands_fit(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const;
  std::unique_ptr<Impl> impl_;
};

std::optional<OperationPlan> plan_operation(const PreparedRequest& request, BackendCache& backends);

}  // namespace dmlbits
