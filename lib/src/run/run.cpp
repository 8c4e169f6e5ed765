#include "run.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "io.hpp"
#include "memory.hpp"

namespace dmlbits {

bool run_is_timed(const PreparedRequest& p, const RunHooks& hooks) { return p.request().timing || hooks.on_validated; }

namespace {
std::vector<OperandInfo> operand_infos(const std::vector<LoadedOperand>& inputs) {
  std::vector<OperandInfo> operands;
  operands.reserve(inputs.size());
  for (const auto& in : inputs) operands.push_back({in.dtype(), in.shape()});
  return operands;
}
}  // namespace

std::unique_ptr<Backend> make_operation_backend(const PreparedRequest& p, const std::vector<LoadedOperand>& inputs) {
  return make_backend(p, operand_infos(inputs));
}

Backend& operation_backend(const PreparedRequest& p, const std::vector<LoadedOperand>& inputs, BackendCache* backends,
                           std::unique_ptr<Backend>& owned, CachedBackends::Entry*& entry) {
  entry = nullptr;
  if (!backends) {
    owned = make_operation_backend(p, inputs);
    return *owned;
  }
  // auto decides by the output's size: small and large outputs may get different backends.
  // (Only auto reads the sizes; the other backends' keys and choices do not depend on them.)
  const bool automatic = p.backend() == BackendKind::automatic;
  const std::vector<OperandInfo> operands = automatic ? operand_infos(inputs) : std::vector<OperandInfo>{};
  const bool large = automatic && output_size_hint(operands) >= kAutoGpuMinBytes;
  const std::string adapter = p.request().adapter.value_or("");
  auto& cache = cached_backends(*backends).backends;
  for (auto& e : cache)
    if (e.key.kind == p.backend() && e.key.large == large && e.key.threads == p.threads() && e.key.isa == p.isa() &&
        e.key.adapter == adapter) {
      entry = &e;
      return *e.backend;
    }
  if (cache.size() >= 64) cache.clear();  // options made and dropped by the thousand: start again
  CachedBackends::Key key{p.backend(), p.isa(), p.threads(), adapter, large};
  std::shared_ptr<Backend> made = make_backend(p, operands);
  cache.push_back({std::move(key), std::move(made), {}, 0});
  entry = &cache.back();
  return *cache.back().backend;
}

namespace {

// One execution; with between_chunks, in chunks of about kInMemoryChunkBytes where the
// operation allows it (no axis broadcast), calling it after each chunk but the last.
void execute(const std::function<void()>& between_chunks, Backend& backend, const ValidatedOp& op,
             const ExecuteBuffers& buffers) {
  const std::uint64_t n = op.output_shape().element_count();
  if (!between_chunks || op.desc().empty || !op.is_flat_streamable()) {
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
    if (first + m < n) between_chunks();
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
// conversion of the whole operand into fresh memory first. between_chunks, if any, is called
// about every kInMemoryChunkBytes, never after the last chunk. Needs a flat-streamable
// operation.
void execute_converting(const std::function<void()>& between_chunks, Backend& backend, const ValidatedOp& op,
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
    if (between_chunks && first + m < n && since_check >= kInMemoryChunkBytes) {
      since_check = 0;
      between_chunks();
    }
  }
}

// The validation request of `p`'s operation on operands of these dtypes and shapes.
OpRequest op_request(const PreparedRequest& p, const std::vector<LoadedOperand>& inputs) {
  const OperationRequest& r = p.request();
  OpRequest request{r.op, p.level(), {}, r.out_dtype, p.shift_overflow(), r.in_place};
  request.inputs.reserve(inputs.size());
  for (const auto& in : inputs) request.inputs.push_back({in.dtype(), in.shape()});
  return request;
}

}  // namespace

ValidatedOp validate_operation(const PreparedRequest& p, const std::vector<LoadedOperand>& inputs,
                               const Backend& backend) {
  const OpRequest request = op_request(p, inputs);
  ValidatedOp v = validate(request);
  if (auto why = backend.unsupported_reason(v))
    throw Error(Errc::unsupported,
                fmt::format("{}: the {} backend cannot run this: {}", v.op().verb, backend.name(), *why));
  return v;
}

namespace {

bool same_operation(const OpRequest& kept, const PreparedRequest& p, const std::vector<LoadedOperand>& inputs) {
  const OperationRequest& r = p.request();
  if (kept.op != r.op || kept.level != p.level() || kept.out_dtype != r.out_dtype ||
      kept.shift_overflow != p.shift_overflow() || kept.in_place != r.in_place || kept.inputs.size() != inputs.size())
    return false;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (kept.inputs[i].dtype != inputs[i].dtype() || !(kept.inputs[i].shape == inputs[i].shape())) return false;
  return true;
}

// validate_operation, or the operation `entry`'s backend accepted before for the same request
// (entry null: validated afresh).
std::shared_ptr<const ValidatedOp> validated_operation(const PreparedRequest& p,
                                                       const std::vector<LoadedOperand>& inputs, const Backend& backend,
                                                       CachedBackends::Entry* entry) {
  if (!entry) return std::make_shared<const ValidatedOp>(validate_operation(p, inputs, backend));
  for (const auto& v : entry->validated)
    if (same_operation(v.request, p, inputs)) return v.op;
  auto op = std::make_shared<const ValidatedOp>(validate_operation(p, inputs, backend));
  CachedBackends::Validated kept{op_request(p, inputs), op};
  if (entry->validated.size() < CachedBackends::kValidatedPerBackend) {
    entry->validated.push_back(std::move(kept));
  } else {
    entry->validated[entry->next_replaced] = std::move(kept);
    entry->next_replaced = (entry->next_replaced + 1) % CachedBackends::kValidatedPerBackend;
  }
  return op;
}

// An in-memory run's operands as read and the memory of its result.
struct InMemory {
  std::vector<LoadedOperand>& inputs;  // the StartedRun's
  TensorView output_view;              // the request's buffer, or allocate_result's memory, when it had one
  Tensor output;                       // empty when in place (the result is inputs[0]) or with an output_view

  TensorView result(const ValidatedOp& op) const {
    if (op.in_place()) return inputs[0].view();
    if (output_view.data) return output_view;
    return output.view();
  }
};

// In memory: everything after the execution counts as writing, so that the phases add up.
RunResult write_in_memory(const PreparedRequest& p, const RunHooks& hooks, const std::function<OutputTarget()>& target,
                          bool timed, RunResult r, InMemory& m) {
  const OperationRequest& spec = p.request();
  std::optional<Stopwatch> write;
  if (timed) write.emplace();
  if (hooks.before_write) {
    for (auto& in : m.inputs) in.materialize();  // as read: borrowed operands converted
    std::vector<TensorView> inputs;
    for (const auto& in : m.inputs) inputs.push_back(in.view());
    hooks.before_write(r.op, inputs);
  }
  if (spec.explain_only) return r;
  if (hooks.on_validated) hooks.on_validated(r.op, r.timing);
  if (target) {
    const OutputTarget to = target();
    write_tensor(m.result(validated(r.op)), to.path, to.format, to.json);
  }
  if (spec.keep_result || (spec.output == OutputKind::memory && !hooks.allocate_result)) {
    if (validated(r.op).in_place() && m.inputs[0].kind != OperandKind::borrowed)
      r.result = std::move(m.inputs[0].tensor);
    else if (!validated(r.op).in_place() && !m.output_view.data) r.result = std::move(m.output);
    else {  // caller memory: copied, since the result must own its storage
      const TensorView v = m.result(validated(r.op));
      r.result = Tensor(v.dtype, v.shape);
      std::memcpy(r.result->data(), v.data, v.byte_size());
    }
  }
  if (write) {
    const double write_s = write->seconds();
    r.timing.phases.push_back({"write", write_s});
    r.timing.total_seconds += write_s;
  }
  return r;
}

// The run's own files: its output must not be one of its inputs (in place, the one way to write
// over an input, has no output file). A face checks its other files with them (the command
// line's --expect, --time-json, ...) before it calls run(); a program that calls run() alone
// gets the same refusal here.
void check_run_files(const OperationRequest& r) {
  const bool file_output = r.output == OutputKind::file || (r.output == OutputKind::automatic && !r.path.empty());
  if (!file_output) return;
  std::vector<FileUse> uses;
  for (std::size_t i = 0; i < r.operands.size(); ++i)
    if (const auto* text = std::get_if<std::string>(&r.operands[i]);
        text && classify_operand(*text) == OperandKind::file)
      uses.push_back({*text, fmt::format("input {}", static_cast<char>('A' + i)), false, true, false});
  if (uses.empty()) return;
  uses.push_back({r.path, "the output", true});
  check_file_uses(uses);
}

}  // namespace

StartedRun start_run(const PreparedRequest& p, LoadMode mode, BackendCache* backends, bool timed) {
  StartedRun s(timed);
  RunTiming& t = s.result.timing;
  if (timed) t.phases.reserve(7);  // read, backend, validate, allocate, warmup, execute, write
  const OperationRequest& r = p.request();
  check_run_files(r);
  s.inputs = load_operands(r.operands, r.dtype, mode);
  s.clock.lap(t, "read");
  s.backend = &operation_backend(p, s.inputs, backends, s.owned, s.cached);
  s.clock.lap(t, "backend");
  s.result.op = OperationAccess::make(validated_operation(p, s.inputs, *s.backend, s.cached));
  s.clock.lap(t, "validate");
  if (timed) {
    t.backend = std::string(s.backend->name());
    t.selection = s.backend->selection();
    t.threads = s.backend->thread_team();
  }
  return s;
}

LoadMode in_memory_load_mode(const PreparedRequest& p, const RunHooks& hooks) {
  const OperationRequest& r = p.request();
  const bool convert_in_chunks = !run_is_timed(p, hooks) && r.repeat == 1 && r.warmup == 0 && !r.in_place;
  return convert_in_chunks ? LoadMode::borrowed_as_is : LoadMode::whole;
}

RunResult run_operation(const PreparedRequest& p, const RunHooks& hooks, BackendCache* backends,
                        const std::function<OutputTarget()>& target) {
  return finish_in_memory(p, start_run(p, in_memory_load_mode(p, hooks), backends, run_is_timed(p, hooks)), hooks,
                          target);
}

MutableTensorView result_memory(const OperationRequest& spec, const RunHooks& hooks, DType dtype, const Shape& shape,
                                Tensor& owned) {
  if (spec.output == OutputKind::buffer) {
    const MutableTensorView out = *spec.buffer;
    // The caller's argument (Python's out=): a usage error, which each face words.
    if (out.dtype != dtype)
      throw OptionError(OptionKey::out, OptionRule::wrong_dtype, std::string(dtype_info(out.dtype).numpy_name),
                        std::string(dtype_info(dtype).numpy_name));
    if (!(out.shape == shape))
      throw OptionError(OptionKey::out, OptionRule::wrong_shape, out.shape.to_string(), shape.to_string());
    return out;
  }
  if (spec.output == OutputKind::memory && hooks.allocate_result) {
    const MutableTensorView out = hooks.allocate_result(dtype, shape);
    if (out.dtype != dtype || !(out.shape == shape) || (!out.data && out.byte_size() > 0))
      throw Error(Errc::internal, "allocate_result: memory of another dtype or shape than the result's");
    return out;
  }
  owned = Tensor(dtype, shape);
  return owned.mutable_view();
}

RunResult finish_in_memory(const PreparedRequest& p, StartedRun&& run, const RunHooks& hooks,
                           const std::function<OutputTarget()>& target) {
  const OperationRequest& spec = p.request();
  RunResult& r = run.result;
  r.warmup = spec.warmup;
  InMemory m{run.inputs, {}, {}};
  Backend* backend = run.backend;
  PhaseClock& clock = run.clock;
  const bool timed = clock.on();
  if (timed) r.timing.device = backend->device_description_for(validated(r.op), false);
  if (spec.explain_only) return write_in_memory(p, hooks, target, timed, std::move(r), m);
  const bool converting =
      std::any_of(m.inputs.begin(), m.inputs.end(), [](const LoadedOperand& in) { return in.converts(); });
  if (converting && (validated(r.op).desc().empty || !validated(r.op).is_flat_streamable()))
    for (auto& in : m.inputs) in.materialize();  // an axis broadcast: whole, before
  const bool chunked = converting && !validated(r.op).desc().empty && validated(r.op).is_flat_streamable();

  ExecuteBuffers buffers;
  if (!chunked) {
    buffers.inputs.reserve(m.inputs.size());
    for (const auto& in : m.inputs) buffers.inputs.push_back(in.view().bytes());
  }
  MutableTensorView out;
  if (spec.in_place) {
    // (Its operand is writable: prepare_request's in-place rule.)
    out = {m.inputs[0].dtype(), m.inputs[0].shape(), m.inputs[0].writable_data()};
  } else {
    out = result_memory(spec, hooks, validated(r.op).output_dtype(), validated(r.op).output_shape(), m.output);
    if (!m.output.data()) m.output_view = out;
  }
  buffers.output = {out.data, out.byte_size()};
  clock.lap(r.timing, "allocate");  // allocation is not execution
  for (int i = 0; i < spec.warmup; ++i) {
    execute(hooks.between_chunks, *backend, validated(r.op), buffers);
    if (hooks.between_chunks) hooks.between_chunks();
  }
  if (spec.warmup > 0) clock.lap(r.timing, "warmup");
  // The backend's phases so far (its creation, earlier runs, the warm-ups): taken from its totals
  // after the measured runs, so that those runs' own phases are known.
  std::vector<PhaseTime> before_measured;
  if (clock.on()) {
    r.execute_samples.reserve(static_cast<std::size_t>(spec.repeat));
    before_measured = backend->detail_phases();
  }
  if (chunked) {  // (untimed, once: convert_in_chunks)
    execute_converting(hooks.between_chunks, *backend, validated(r.op), m.inputs, buffers.output);
  }
  for (int i = 0; i < spec.repeat && !chunked; ++i) {
    if (clock.on()) {
      Stopwatch one;
      execute(hooks.between_chunks, *backend, validated(r.op), buffers);
      r.execute_samples.push_back(one.seconds());
    } else {
      execute(hooks.between_chunks, *backend, validated(r.op), buffers);
    }
    if (hooks.between_chunks && i + 1 < spec.repeat) hooks.between_chunks();
  }
  clock.lap(r.timing, "execute");  // every measured run: the phases add up
  r.timing.execute_runs = spec.repeat;
  if (clock.on()) {
    r.timing.backend_phases = backend->detail_phases();
    for (const PhaseTime& phase : r.timing.backend_phases) {
      double earlier = 0;
      for (const PhaseTime& b : before_measured)
        if (b.name == phase.name) earlier = b.seconds;
      r.timing.measured_backend_phases.push_back({phase.name, phase.seconds - earlier});
    }
  }
  r.timing.execute_bytes = out.byte_size();
  for (const auto& in : m.inputs) r.timing.execute_bytes += in.shape().byte_size(dtype_info(in.dtype()).size);
  r.timing.total_seconds = clock.total_seconds();
  return write_in_memory(p, hooks, target, timed, std::move(r), m);
}

struct OperationPlan::Impl {
  std::shared_ptr<Backend> backend;
  std::shared_ptr<const ValidatedOp> op;
  std::vector<std::pair<DType, Shape>> operands;
  // The variables the request left the choice to, and what prepare_request read of them.
  bool isa_left = false, threads_left = false;
  OptionVariables variables;
  mutable ExecuteBuffers buffers;  // reused: a run allocates nothing
};

OperationPlan::OperationPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OperationPlan::OperationPlan(OperationPlan&&) noexcept = default;
OperationPlan& OperationPlan::operator=(OperationPlan&&) noexcept = default;
OperationPlan::~OperationPlan() = default;

Operation OperationPlan::op() const { return OperationAccess::make(impl_->op); }
DType OperationPlan::output_dtype() const { return impl_->op->output_dtype(); }
const Shape& OperationPlan::output_shape() const { return impl_->op->output_shape(); }

bool OperationPlan::fits(std::span<const BorrowedTensor> operands, const MutableTensorView& out,
                         const OptionVariables& variables) const {
  const Impl& p = *impl_;
  if (operands.size() != p.operands.size() || out.dtype != p.op->output_dtype() || !(out.shape == p.op->output_shape()))
    return false;
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (operands[i].dtype != p.operands[i].first || !(operands[i].shape == p.operands[i].second) ||
        !operands[i].strides.empty() || operands[i].byte_swapped)
      return false;
  return (!p.isa_left || variables.isa == p.variables.isa) &&
         (!p.threads_left || variables.threads == p.variables.threads);
}

void OperationPlan::run(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const {
  const Impl& p = *impl_;
  const std::size_t size = dtype_info(p.op->input_dtype()).size;
  p.buffers.inputs.resize(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i)
    p.buffers.inputs[i] = {operands[i].data, operands[i].shape.element_count() * size};
  p.buffers.output = {out.data, out.byte_size()};
  p.backend->run(*p.op, p.buffers);
}

std::optional<OperationPlan> plan_operation(const PreparedRequest& prepared, BackendCache& backends) {
  const OperationRequest& r = prepared.request();
  if (r.in_place || r.repeat + r.warmup != 1 || r.timing || r.explain_only || r.keep_result ||
      (r.output != OutputKind::memory && r.output != OutputKind::buffer))
    return std::nullopt;
  for (const auto& operand : r.operands) {
    const auto* t = std::get_if<BorrowedTensor>(&operand);
    if (!t || !t->strides.empty() || t->byte_swapped) return std::nullopt;
  }
  StartedRun s = start_run(prepared, LoadMode::whole, &backends, false);
  auto plan = std::make_unique<OperationPlan::Impl>();
  plan->backend = s.cached->backend;
  plan->op = OperationAccess::shared(s.result.op);
  for (const auto& in : s.inputs) plan->operands.emplace_back(in.dtype(), in.shape());
  plan->isa_left = r.isa.empty();
  plan->threads_left = !r.threads;
  if (plan->isa_left) plan->variables.isa = prepared.isa();
  if (plan->threads_left) plan->variables.threads = prepared.threads();
  return OperationPlan(std::move(plan));
}

CachedBackends& cached_backends(BackendCache& cache) { return BackendCacheAccess::backends(cache); }

BackendCache::BackendCache() : impl_(std::make_unique<Impl>()) {}
BackendCache::~BackendCache() = default;
void BackendCache::clear() { impl_->backends.backends.clear(); }

}  // namespace dmlbits
