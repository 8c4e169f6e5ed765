#include "run.hpp"

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {

TensorView OperationResult::result() const {
  if (op && op->in_place()) return inputs[0].view();
  if (output_view.data) return output_view;
  return output.view();
}

BackendOptions backend_options(const OperationSpec& spec) {
  BackendOptions options;
  options.isa = spec.isa;
  options.threads = spec.threads;
  options.adapter = spec.adapter;
  return options;
}

std::unique_ptr<Backend> make_operation_backend(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs) {
  std::vector<OperandInfo> operands;
  for (const auto& in : inputs) operands.push_back({in.dtype(), in.shape()});
  BackendOptions options = backend_options(spec);
  options.size_hint = output_size_hint(operands);
  return make_backend(spec.backend, options);
}

ValidatedOp validate_operation(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs,
                               const Backend& backend) {
  OpRequest request;
  request.op = spec.op;
  request.level = spec.level;
  for (const auto& in : inputs) request.inputs.push_back({in.dtype(), in.shape()});
  request.out_dtype = spec.out_dtype;
  request.shift_overflow = spec.shift_overflow;
  request.in_place = spec.in_place;
  ValidatedOp v = validate(request);
  if (auto why = backend.unsupported_reason(v))
    throw Error(Errc::unsupported,
                fmt::format("{}: the {} backend cannot run this: {}", v.op().verb, backend.name(), *why));
  return v;
}

OperationResult run_operation(const OperationSpec& spec) {
  check_repeat(spec.repeat, spec.warmup, spec.in_place);
  Stopwatch total;
  Stopwatch phase;
  OperationResult r;
  check_backend_options(spec.backend, backend_options(spec));  // a wrong --backend before any reading

  r.inputs = load_operands(spec.operands, spec.dtype);
  r.timing.phases.push_back({"read", phase.lap()});
  auto backend = make_operation_backend(spec, r.inputs);
  r.timing.phases.push_back({"backend", phase.lap()});

  r.op = std::make_unique<ValidatedOp>(validate_operation(spec, r.inputs, *backend));
  r.timing.phases.push_back({"validate", phase.lap()});
  r.timing.backend = std::string(backend->name());
  r.timing.device = backend->device_description_for(*r.op, false);
  r.timing.selection = backend->selection_reason();
  if (spec.explain_only) return r;

  ExecuteBuffers buffers;
  for (const auto& in : r.inputs) buffers.inputs.push_back(in.view().bytes());
  MutableTensorView out;
  if (spec.in_place) {
    out = {r.inputs[0].dtype(), r.inputs[0].shape(), r.inputs[0].writable_data()};
    if (!out.data) throw Error(Errc::usage, "in place: operand A is borrowed read-only");
  } else if (spec.output_buffer) {
    out = *spec.output_buffer;
    if (out.dtype != r.op->output_dtype() || !(out.shape == r.op->output_shape()))
      throw Error(Errc::invalid_input,
                  fmt::format("the output buffer is {} {}, the result {} {}", dtype_info(out.dtype).numpy_name,
                              out.shape.to_string(), dtype_info(r.op->output_dtype()).numpy_name,
                              r.op->output_shape().to_string()));
    r.output_view = out;
  } else {
    r.output = Tensor(r.op->output_dtype(), r.op->output_shape());
    out = r.output.mutable_view();
  }
  buffers.output = {out.data, out.byte_size()};
  r.timing.phases.push_back({"allocate", phase.lap()});  // allocation is not execution
  for (int i = 0; i < spec.warmup; ++i) backend->run(*r.op, buffers);
  if (spec.warmup > 0) r.timing.phases.push_back({"warmup", phase.lap()});
  for (int i = 0; i < spec.repeat; ++i) {
    Stopwatch one;
    backend->run(*r.op, buffers);
    r.execute_samples.push_back(one.seconds());
  }
  r.timing.phases.push_back({"execute", phase.lap()});  // every measured run: the phases add up
  r.timing.execute_runs = spec.repeat;
  r.timing.backend_phases = backend->detail_phases();
  r.timing.execute_bytes = out.byte_size();
  for (const auto& in : r.inputs) r.timing.execute_bytes += in.view().byte_size();
  r.timing.total_seconds = total.seconds();
  return r;
}

}  // namespace dmlbits
