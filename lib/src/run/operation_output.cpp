#include "operation_output.hpp"

#include <cstring>
#include <utility>

namespace dmlbits {
namespace {

// output_streams without the format: whether the target's format is worth learning first.
bool may_stream(const OperationSpec& spec, const OutputRequest& request) {
  return request.target && !request.keep_result && !request.before_write && !spec.explain_only &&
         spec.repeat == 1 && spec.warmup == 0;
}

OutputRun stream_to(const OperationSpec& spec, const OutputTarget& target, const OutputRequest& request) {
  StreamResult s = stream_operation(spec, target.path, request.progress, request.on_validated);
  OutputRun r;
  r.execute_samples = {s.timing.phase("execute")};
  r.op = std::move(s.op);
  r.timing = std::move(s.timing);
  r.streamed = true;
  return r;
}

// In memory: everything after the run counts as writing, so that the phases add up.
OutputRun run_then_write(const OperationSpec& spec, std::optional<OutputTarget> target, const OutputRequest& request) {
  OperationResult m = run_operation(spec);
  std::optional<Stopwatch> write;
  if (spec.timed) write.emplace();
  if (request.before_write) {
    for (auto& in : m.inputs) in.materialize();  // as read: borrowed operands converted
    request.before_write(m);
  }
  OutputRun r;
  if (!spec.explain_only) {
    if (request.on_validated) request.on_validated(*m.op, m.timing);
    if (!target && request.target) target = request.target();
    if (target) write_tensor(m.result(), target->path, target->format, target->json);
    if (request.keep_result) {
      if (m.op->in_place() && m.inputs[0].kind != OperandKind::borrowed) r.result = std::move(m.inputs[0].tensor);
      else if (!m.op->in_place() && !m.output_view.data) r.result = std::move(m.output);
      else {  // caller memory: copied, since the result must own its storage
        const TensorView v = m.result();
        r.result = Tensor(v.dtype, v.shape);
        std::memcpy(r.result->data(), v.data, v.byte_size());
      }
    }
    if (write) {
      const double write_s = write->seconds();
      m.timing.phases.push_back({"write", write_s});
      m.timing.total_seconds += write_s;
    }
  }
  r.op = std::move(m.op);
  r.timing = std::move(m.timing);
  r.execute_samples = std::move(m.execute_samples);
  return r;
}

}  // namespace

bool output_streams(const OperationSpec& spec, const OutputRequest& request, TensorFormat target_format) {
  return may_stream(spec, request) && target_format == TensorFormat::npy;
}

OutputRun run_to_output(const OperationSpec& spec, const OutputRequest& request) {
  std::optional<OutputTarget> target;
  if (may_stream(spec, request)) {
    target = request.target();
    if (output_streams(spec, request, target->format)) return stream_to(spec, *target, request);
  }
  return run_then_write(spec, std::move(target), request);
}

}  // namespace dmlbits
