#include "run.hpp"

#include <algorithm>

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

Backend& operation_backend(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs,
                           std::unique_ptr<Backend>& owned) {
  if (!spec.backends) {
    owned = make_operation_backend(spec, inputs);
    return *owned;
  }
  std::vector<OperandInfo> operands;
  operands.reserve(inputs.size());
  for (const auto& in : inputs) operands.push_back({in.dtype(), in.shape()});
  BackendOptions options = backend_options(spec);
  options.size_hint = output_size_hint(operands);
  // auto decides by the output's size: small and large outputs may get different backends.
  BackendCache::Impl::Key key{spec.backend, spec.isa, spec.threads, spec.adapter,
                              spec.backend == BackendKind::automatic && options.size_hint >= kAutoGpuMinBytes};
  auto& cache = spec.backends->impl().backends;
  for (auto& [k, b] : cache)
    if (k == key) return *b;
  if (cache.size() >= 64) cache.clear();  // options made and dropped by the thousand: start again
  cache.emplace_back(std::move(key), make_backend(spec.backend, options));
  return *cache.back().second;
}

namespace {

// One execution; with spec.between_chunks, in chunks of about kInMemoryChunkBytes where the
// operation allows it (no axis broadcast), calling it after each chunk but the last.
void execute(const OperationSpec& spec, Backend& backend, const ValidatedOp& op, const ExecuteBuffers& buffers) {
  const std::uint64_t n = op.output_shape().element_count();
  if (!spec.between_chunks || op.desc().empty || !op.is_flat_streamable()) {
    backend.run(op, buffers);
    return;
  }
  const std::size_t out_size = dtype_info(op.output_dtype()).size;
  const std::size_t in_size = dtype_info(op.input_dtype()).size;
  std::uint64_t per_element = out_size;
  for (const auto& s : op.input_shapes())
    if (s.element_count() != 1) per_element += in_size;
  const std::uint64_t count = std::max<std::uint64_t>(1, kInMemoryChunkBytes / per_element);
  if (n <= count) {
    backend.run(op, buffers);
    return;
  }
  const ValidatedOp full = op.flat_chunk(count);
  std::optional<ValidatedOp> last;
  if (n % count) last = op.flat_chunk(n % count);
  for (std::uint64_t first = 0; first < n; first += count) {
    const std::uint64_t m = std::min(count, n - first);
    ExecuteBuffers part;
    for (std::size_t i = 0; i < buffers.inputs.size(); ++i) {
      const bool whole = op.input_shapes()[i].element_count() != 1;
      part.inputs.push_back(whole ? buffers.inputs[i].subspan(first * in_size, m * in_size) : buffers.inputs[i]);
    }
    part.output = buffers.output.subspan(first * out_size, m * out_size);
    backend.run(m == count ? full : *last, part);
    if (first + m < n) spec.between_chunks();
  }
}

}  // namespace

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
  r.timing.phases.reserve(7);  // read, backend, validate, allocate, warmup, execute, write
  check_backend_options(spec.backend, backend_options(spec));  // a wrong --backend before any reading

  r.inputs = load_operands(spec.operands, spec.dtype);
  r.timing.phases.push_back({"read", phase.lap()});
  std::unique_ptr<Backend> owned;
  Backend* backend = &operation_backend(spec, r.inputs, owned);
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
    // Python's out=: the caller's argument, a usage error in its words.
    const bool python = spec.face == RequestFace::python;
    const Errc code = python ? Errc::usage : Errc::invalid_input;
    const char* name = python ? "out" : "the output buffer";
    if (out.dtype != r.op->output_dtype())
      throw Error(code, fmt::format("{}: the result is {}, but {} has dtype {}", name,
                                    dtype_info(r.op->output_dtype()).numpy_name, name, dtype_info(out.dtype).numpy_name));
    if (!(out.shape == r.op->output_shape()))
      throw Error(code, fmt::format("{}: the result has shape {}, but {} has shape {}", name,
                                    r.op->output_shape().to_string(), name, out.shape.to_string()));
    r.output_view = out;
  } else {
    r.output = Tensor(r.op->output_dtype(), r.op->output_shape());
    out = r.output.mutable_view();
  }
  buffers.output = {out.data, out.byte_size()};
  r.timing.phases.push_back({"allocate", phase.lap()});  // allocation is not execution
  for (int i = 0; i < spec.warmup; ++i) {
    execute(spec, *backend, *r.op, buffers);
    if (spec.between_chunks) spec.between_chunks();
  }
  if (spec.warmup > 0) r.timing.phases.push_back({"warmup", phase.lap()});
  r.execute_samples.reserve(static_cast<std::size_t>(spec.repeat));
  for (int i = 0; i < spec.repeat; ++i) {
    Stopwatch one;
    execute(spec, *backend, *r.op, buffers);
    r.execute_samples.push_back(one.seconds());
    if (spec.between_chunks && i + 1 < spec.repeat) spec.between_chunks();
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
