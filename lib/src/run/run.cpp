#include "run.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "environment.hpp"
#include "memory.hpp"

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
  options.input_bytes_hint = input_size_hint(operands);
  return make_backend(spec.backend, options);
}

Backend& operation_backend(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs,
                           std::unique_ptr<Backend>& owned, BackendCache::Impl::Entry** entry) {
  if (entry) *entry = nullptr;
  if (!spec.backends) {
    owned = make_operation_backend(spec, inputs);
    return *owned;
  }
  // auto decides by the output's size: small and large outputs may get different backends.
  // (Only auto reads the size; the other backends' keys and choices do not depend on it.)
  std::uint64_t size_hint = 0, input_bytes = 0;
  if (spec.backend == BackendKind::automatic) {
    std::vector<OperandInfo> operands;
    operands.reserve(inputs.size());
    for (const auto& in : inputs) operands.push_back({in.dtype(), in.shape()});
    size_hint = output_size_hint(operands);
    input_bytes = input_size_hint(operands);
  }
  auto& cache = spec.backends->impl().backends;
  const bool large = size_hint >= kAutoGpuMinBytes;
  std::string isa_env = isa_variable(spec.isa), threads_env = threads_variable(spec.threads);
  for (auto& e : cache)
    if (e.key.kind == spec.backend && e.key.large == large && e.key.threads == spec.threads && e.key.isa == spec.isa &&
        e.key.adapter == spec.adapter && e.key.isa_variable == isa_env && e.key.threads_variable == threads_env) {
      if (entry) *entry = &e;
      return *e.backend;
    }
  if (cache.size() >= 64) cache.clear();  // options made and dropped by the thousand: start again
  BackendOptions options = backend_options(spec);
  options.size_hint = size_hint;
  options.input_bytes_hint = input_bytes;
  BackendCache::Impl::Key key{spec.backend, spec.isa, spec.threads, spec.adapter, large, std::move(isa_env),
                              std::move(threads_env)};
  std::shared_ptr<Backend> made = make_backend(spec.backend, options);
  cache.push_back({std::move(key), std::move(made), {}, 0});
  if (entry) *entry = &cache.back();
  return *cache.back().backend;
}

std::string isa_variable(const std::string& isa) {
  return isa.empty() ? environment_variable("DMLBITS_ISA").value_or("") : std::string();
}

std::string threads_variable(unsigned threads) {
  return threads == 0 ? environment_variable("DMLBITS_THREADS").value_or("") : std::string();
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

// Bytes of each converted operand per chunk (LoadMode::borrowed_as_is): small enough that the
// scratch stays in a core's cache between the conversion that writes it and the kernel that
// reads it, and comes from the heap's reused pages (under kMappedBufferBytes: a mapping of its
// own per call, faulted afresh, cost more than converting 128 KiB), large enough that a
// chunk's call costs little beside its work.
constexpr std::uint64_t kConversionChunkBytes = std::uint64_t{64} << 10;
static_assert(kConversionChunkBytes < kMappedBufferBytes);

// The scratch of input `i`'s chunks, kConversionChunkBytes, made once per thread and kept:
// allocated per call, its pages came and went with the heap's top (glibc trims it) and were
// faulted afresh, which cost some calls hundreds of microseconds. Never reallocated, so a run
// nested in between_chunks (a Python signal handler's) leaves the caller's pointers valid; it
// overwrites only chunks already consumed.
std::byte* conversion_scratch(std::size_t i) {
  thread_local std::vector<AlignedBuffer> buffers;
  while (buffers.size() <= i) buffers.emplace_back(kConversionChunkBytes);
  return buffers[i].data();
}

// One execution whose borrowed operands in another layout or byte order are converted a chunk
// at a time into scratch (LoadedOperand::chunk), as NumPy's ufuncs buffer theirs: no
// conversion of the whole operand into fresh memory first. spec.between_chunks, if any, is
// called about every kInMemoryChunkBytes, never after the last chunk. Needs a flat-streamable
// operation.
void execute_converting(const OperationSpec& spec, Backend& backend, const ValidatedOp& op,
                        const std::vector<LoadedOperand>& inputs, std::span<std::byte> output) {
  const std::uint64_t n = op.output_shape().element_count();
  const std::size_t out_size = dtype_info(op.output_dtype()).size;
  const std::size_t in_size = dtype_info(op.input_dtype()).size;
  std::uint64_t per_element = out_size;
  for (const auto& in : inputs)
    if (in.shape().element_count() != 1) per_element += in_size;
  const std::uint64_t count = std::max<std::uint64_t>(1, std::min(n, kConversionChunkBytes / in_size));
  std::vector<std::byte*> scratch(inputs.size(), nullptr);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].chunk_needs_scratch()) scratch[i] = conversion_scratch(i);
  ExecuteBuffers part;
  part.inputs.resize(inputs.size());
  if (n <= count) {  // one chunk: the operation as it is, its operands converted whole
    for (std::size_t i = 0; i < inputs.size(); ++i)
      part.inputs[i] = inputs[i].chunk(0, inputs[i].shape().element_count(), scratch[i]);
    part.output = output;
    backend.run(op, part);
    return;
  }
  const ValidatedOp full = op.flat_chunk(count);
  std::optional<ValidatedOp> last;
  if (n % count) last = op.flat_chunk(n % count);
  std::uint64_t since_check = 0;
  for (std::uint64_t first = 0; first < n; first += count) {
    const std::uint64_t m = std::min(count, n - first);
    for (std::size_t i = 0; i < inputs.size(); ++i) part.inputs[i] = inputs[i].chunk(first, m, scratch[i]);
    part.output = output.subspan(first * out_size, m * out_size);
    backend.run(m == count ? full : *last, part);
    since_check += m * per_element;
    if (spec.between_chunks && first + m < n && since_check >= kInMemoryChunkBytes) {
      since_check = 0;
      spec.between_chunks();
    }
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

namespace {

// The phases of a run, timed when spec.timed (else nothing is measured: no clock is read).
class PhaseClock {
 public:
  PhaseClock(bool on, RunTiming& timing) : timing_(timing) {
    if (on) {
      total_.emplace();
      phase_.emplace();
      timing_.phases.reserve(7);  // read, backend, validate, allocate, warmup, execute, write
    }
  }
  bool on() const { return phase_.has_value(); }
  void lap(const char* name) {
    if (phase_) timing_.phases.push_back({name, phase_->lap()});
  }
  double total_seconds() const { return total_ ? total_->seconds() : 0; }

 private:
  RunTiming& timing_;
  std::optional<Stopwatch> total_;
  std::optional<Stopwatch> phase_;
};

bool same_operation(const OpRequest& kept, const OperationSpec& spec, const std::vector<LoadedOperand>& inputs) {
  if (kept.op != spec.op || kept.level != spec.level || kept.out_dtype != spec.out_dtype ||
      kept.shift_overflow != spec.shift_overflow || kept.in_place != spec.in_place || kept.inputs.size() != inputs.size())
    return false;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (kept.inputs[i].dtype != inputs[i].dtype() || !(kept.inputs[i].shape == inputs[i].shape())) return false;
  return true;
}

}  // namespace

// validate_operation, or the operation `entry`'s backend validated before for the same request.
std::shared_ptr<const ValidatedOp> validated_operation(const OperationSpec& spec, const std::vector<LoadedOperand>& inputs,
                                                       const Backend& backend, BackendCache::Impl::Entry* entry) {
  if (!entry) return std::make_shared<const ValidatedOp>(validate_operation(spec, inputs, backend));
  for (const auto& v : entry->validated)
    if (same_operation(v.request, spec, inputs)) return v.op;
  auto op = std::make_shared<const ValidatedOp>(validate_operation(spec, inputs, backend));
  BackendCache::Impl::Validated kept{{spec.op, spec.level, {}, spec.out_dtype, spec.shift_overflow, spec.in_place}, op};
  for (const auto& in : inputs) kept.request.inputs.push_back({in.dtype(), in.shape()});
  if (entry->validated.size() < BackendCache::Impl::kValidatedPerBackend) {
    entry->validated.push_back(std::move(kept));
  } else {
    entry->validated[entry->next_replaced] = std::move(kept);
    entry->next_replaced = (entry->next_replaced + 1) % BackendCache::Impl::kValidatedPerBackend;
  }
  return op;
}


OperationResult run_operation(const OperationSpec& spec) {
  check_repeat(spec.repeat, spec.warmup, spec.in_place);
  OperationResult r;
  PhaseClock clock(spec.timed, r.timing);
  // A wrong backend option before any reading (prepare_request checked it already for run();
  // run_operation's own callers are held to it too). It costs a few comparisons.
  check_backend_options(spec.backend, backend_options(spec));

  // Borrowed operands in another layout or byte order are converted during the execution
  // where it runs once, untimed (a timed run measures the kernels alone), else before.
  const bool convert_in_chunks = !spec.timed && spec.repeat == 1 && spec.warmup == 0 && !spec.in_place;
  r.inputs = load_operands(spec.operands, spec.dtype, convert_in_chunks ? LoadMode::borrowed_as_is : LoadMode::whole);
  clock.lap("read");
  std::unique_ptr<Backend> owned;
  BackendCache::Impl::Entry* entry = nullptr;
  Backend* backend = &operation_backend(spec, r.inputs, owned, &entry);
  clock.lap("backend");

  r.op = validated_operation(spec, r.inputs, *backend, entry);
  clock.lap("validate");
  if (clock.on()) {
    r.timing.backend = std::string(backend->name());
    r.timing.device = backend->device_description_for(*r.op, false);
    r.timing.selection = backend->selection_reason();
    r.timing.threads = backend->threads_summary();
  }
  if (spec.explain_only) return r;
  const bool converting =
      std::any_of(r.inputs.begin(), r.inputs.end(), [](const LoadedOperand& in) { return in.converts(); });
  if (converting && (r.op->desc().empty || !r.op->is_flat_streamable()))
    for (auto& in : r.inputs) in.materialize();  // an axis broadcast: whole, before
  const bool chunked = converting && !r.op->desc().empty && r.op->is_flat_streamable();

  ExecuteBuffers buffers;
  if (!chunked) {
    buffers.inputs.reserve(r.inputs.size());
    for (const auto& in : r.inputs) buffers.inputs.push_back(in.view().bytes());
  }
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
  } else if (spec.allocate_result) {
    out = spec.allocate_result(r.op->output_dtype(), r.op->output_shape());
    if (out.dtype != r.op->output_dtype() || !(out.shape == r.op->output_shape()) || (!out.data && out.byte_size() > 0))
      throw Error(Errc::internal, "allocate_result: memory of another dtype or shape than the result's");
    r.output_view = out;
  } else {
    r.output = Tensor(r.op->output_dtype(), r.op->output_shape());
    out = r.output.mutable_view();
  }
  buffers.output = {out.data, out.byte_size()};
  clock.lap("allocate");  // allocation is not execution
  for (int i = 0; i < spec.warmup; ++i) {
    execute(spec, *backend, *r.op, buffers);
    if (spec.between_chunks) spec.between_chunks();
  }
  if (spec.warmup > 0) clock.lap("warmup");
  if (clock.on()) r.execute_samples.reserve(static_cast<std::size_t>(spec.repeat));
  if (chunked) {  // (untimed, once: convert_in_chunks)
    execute_converting(spec, *backend, *r.op, r.inputs, buffers.output);
  }
  for (int i = 0; i < spec.repeat && !chunked; ++i) {
    if (clock.on()) {
      Stopwatch one;
      execute(spec, *backend, *r.op, buffers);
      r.execute_samples.push_back(one.seconds());
    } else {
      execute(spec, *backend, *r.op, buffers);
    }
    if (spec.between_chunks && i + 1 < spec.repeat) spec.between_chunks();
  }
  clock.lap("execute");  // every measured run: the phases add up
  r.timing.execute_runs = spec.repeat;
  if (clock.on()) r.timing.backend_phases = backend->detail_phases();
  r.timing.execute_bytes = out.byte_size();
  for (const auto& in : r.inputs) r.timing.execute_bytes += in.shape().byte_size(dtype_info(in.dtype()).size);
  r.timing.total_seconds = clock.total_seconds();
  return r;
}

}  // namespace dmlbits
