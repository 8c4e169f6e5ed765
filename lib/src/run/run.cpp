#include "run.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "environment.hpp"
#include "evaluate.hpp"
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

std::span<const std::byte> flat_cut(std::span<const std::byte> bytes, DType dtype, const Shape& shape,
                                    const Shape& output, std::uint64_t first, std::uint64_t count) {
  const std::size_t size = dtype_info(dtype).size;
  return shape == output ? bytes.subspan(first * size, count * size) : bytes;
}

namespace {

// Elements [first, first + count) of a flat graph's buffers: a run of the output's shape is cut,
// a one-element operand is the same element.
GraphBuffers flat_part(const ValidatedGraph& g, const GraphBuffers& b, std::uint64_t first, std::uint64_t count) {
  const Shape& out = g.output_shape();
  GraphBuffers part;
  part.inputs.reserve(b.inputs.size());
  for (std::size_t i = 0; i < b.inputs.size(); ++i)
    part.inputs.push_back(flat_cut(b.inputs[i], g.inputs()[i].dtype, g.inputs()[i].shape, out, first, count));
  for (std::size_t i = 0; i < b.constants.size(); ++i)
    part.constants.push_back(
        flat_cut(b.constants[i], g.constants()[i].dtype, g.constants()[i].shape, out, first, count));
  const std::size_t out_size = dtype_info(g.output_dtype()).size;
  part.output = b.output.subspan(first * out_size, count * out_size);
  return part;
}

// Bytes an output element of a flat graph reads and writes: its full-size inputs' and its own.
std::uint64_t bytes_per_element(const ValidatedGraph& g) {
  std::uint64_t bytes = dtype_info(g.output_dtype()).size;
  for (const OperandInfo& in : g.inputs())
    if (in.shape == g.output_shape()) bytes += dtype_info(in.dtype).size;
  return bytes;
}

}  // namespace

void run_graph_once(Backend& backend, const ValidatedGraph& graph, const GraphBuffers& buffers) {
  if (graph.nodes().size() == 1) {
    // One operator: its own path on every backend (kernels, DirectML's compiled operator), its
    // operands the inputs and constants it names (`a & a` names one input twice).
    // (Reused: a small call through a kept plan allocates nothing. Backend::run never comes back
    // here before it returns.)
    thread_local ExecuteBuffers e;
    e.inputs.clear();
    const GraphNode& node = graph.output_node();
    for (int i = 0; i < node.op.op().arity; ++i) {
      const GraphValue& v = node.args[static_cast<std::size_t>(i)];
      e.inputs.push_back(v.kind == GraphValue::Kind::input ? buffers.inputs[v.index] : buffers.constants[v.index]);
    }
    e.output = buffers.output;
    backend.run(node.op, e);
    return;
  }
  backend.run_graph(graph, buffers);
}

void execute_graph(Backend& backend, const ValidatedGraph& graph, const GraphBuffers& buffers,
                   const std::function<void()>& between_chunks) {
  const std::uint64_t n = graph.output_shape().element_count();
  if (!between_chunks || n == 0 || !graph.is_flat_streamable()) {
    run_graph_once(backend, graph, buffers);
    return;
  }
  // Each chunk is a run of its own to the backend, which chooses its path by the output's size
  // (the CPU backend streams outputs of 8 MiB and more, and fuses them in registers): a chunk's
  // output is kept at an eighth of kInMemoryChunkBytes at least, where a large run's whole
  // output is in memory. (By its bytes alone a chunk of popcount(a ^ b) into uint8 had 7.5 MiB
  // of output, and the whole run took 1.4x the time it takes in one piece.)
  const std::uint64_t count =
      std::max<std::uint64_t>({1, kInMemoryChunkBytes / bytes_per_element(graph),
                               kInMemoryChunkBytes / 8 / dtype_info(graph.output_dtype()).size});
  if (n <= count) {
    run_graph_once(backend, graph, buffers);
    return;
  }
  const ValidatedGraph full = graph.flat_chunk(count);
  std::optional<ValidatedGraph> last;
  if (n % count) last = graph.flat_chunk(n % count);
  for (std::uint64_t first = 0; first < n; first += count) {
    if (first > 0) between_chunks();
    const std::uint64_t m = std::min(count, n - first);
    run_graph_once(backend, m == count ? full : *last, flat_part(graph, buffers, first, m));
  }
}

namespace {

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
// about every kInMemoryChunkBytes, never after the last chunk. Needs a flat graph.
void execute_converting(const std::function<void()>& between_chunks, Backend& backend, const ValidatedGraph& graph,
                        const std::vector<LoadedOperand>& inputs, const GraphBuffers& whole) {
  // (`whole` has the constants and the output; the inputs come from `inputs`, chunk by chunk.)
  const std::uint64_t n = graph.output_shape().element_count();
  std::size_t widest = 1;
  for (const OperandInfo& in : graph.inputs()) widest = std::max(widest, dtype_info(in.dtype).size);
  const std::uint64_t per_element = bytes_per_element(graph);
  const std::uint64_t count = std::max<std::uint64_t>(1, std::min(n, kConversionChunkBytes / widest));
  std::vector<std::byte*> scratch(inputs.size(), nullptr);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].chunk_needs_scratch()) scratch[i] = conversion_scratch(i);
  if (n <= count) {  // one chunk: the graph as it is, its operands converted whole
    GraphBuffers part = whole;
    part.inputs.resize(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i)
      part.inputs[i] = inputs[i].chunk(0, inputs[i].shape().element_count(), scratch[i]);
    run_graph_once(backend, graph, part);
    return;
  }
  const ValidatedGraph full = graph.flat_chunk(count);
  std::optional<ValidatedGraph> last;
  if (n % count) last = graph.flat_chunk(n % count);
  std::uint64_t since_check = 0;
  for (std::uint64_t first = 0; first < n; first += count) {
    const std::uint64_t m = std::min(count, n - first);
    GraphBuffers part = flat_part(graph, whole, first, m);
    part.inputs.resize(inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) part.inputs[i] = inputs[i].chunk(first, m, scratch[i]);
    run_graph_once(backend, m == count ? full : *last, part);
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
// (entry null: validated afresh), with the operation as a graph of one node, as it runs.
CachedBackends::Validated validated_operation(const PreparedRequest& p, const std::vector<LoadedOperand>& inputs,
                                              const Backend& backend, CachedBackends::Entry* entry) {
  if (entry)
    for (const auto& v : entry->validated)
      if (same_operation(v.request, p, inputs)) return v;
  auto op = std::make_shared<const ValidatedOp>(validate_operation(p, inputs, backend));
  auto graph = std::make_shared<const ValidatedGraph>(single_node_graph(*op));
  CachedBackends::Validated kept{op_request(p, inputs), std::move(op), std::move(graph)};
  if (!entry) return kept;
  if (entry->validated.size() < CachedBackends::kValidatedPerBackend) {
    entry->validated.push_back(kept);
  } else {
    entry->validated[entry->next_replaced] = kept;
    entry->next_replaced = (entry->next_replaced + 1) % CachedBackends::kValidatedPerBackend;
  }
  return kept;
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
      uses.push_back({*text,
                      r.names.size() == r.operands.size() ? fmt::format("operand '{}'", r.names[i])
                                                          : fmt::format("input {}", static_cast<char>('A' + i)),
                      false, true, false});
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
  if (p.is_expression()) {
    start_expression_run(p, mode, backends, s);
  } else {
    s.inputs = load_operands(r.operands, r.dtype, mode);
    s.clock.lap(t, "read");
    s.backend = &operation_backend(p, s.inputs, backends, s.owned, s.cached);
    s.clock.lap(t, "backend");
    CachedBackends::Validated v = validated_operation(p, s.inputs, *s.backend, s.cached);
    s.result.op = OperationAccess::make(std::move(v.op));
    s.graph = std::move(v.graph);
    s.clock.lap(t, "validate");
  }
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
  const ValidatedGraph& graph = *run.graph;
  if (timed) r.timing.device = backend->device_description_for(graph.output_node().op, false);
  if (spec.explain_only) return write_in_memory(p, hooks, target, timed, std::move(r), m);
  const bool converting =
      std::any_of(m.inputs.begin(), m.inputs.end(), [](const LoadedOperand& in) { return in.converts(); });
  const bool flat = graph.output_shape().element_count() > 0 && graph.is_flat_streamable();
  if (converting && !flat)
    for (auto& in : m.inputs) in.materialize();  // an axis broadcast: whole, before
  const bool chunked = converting && flat;

  GraphBuffers buffers;
  if (!chunked) {
    buffers.inputs.reserve(m.inputs.size());
    for (const auto& in : m.inputs) buffers.inputs.push_back(in.view().bytes());
  }
  for (const Tensor& c : run.constants) buffers.constants.push_back(c.view().bytes());
  MutableTensorView out;
  if (spec.in_place) {
    // (Its operand is writable: prepare_request's in-place rule.)
    out = {m.inputs[0].dtype(), m.inputs[0].shape(), m.inputs[0].writable_data()};
  } else {
    out = result_memory(spec, hooks, graph.output_dtype(), graph.output_shape(), m.output);
    if (!m.output.data()) m.output_view = out;
  }
  buffers.output = {out.data, out.byte_size()};
  clock.lap(r.timing, "allocate");  // allocation is not execution
  for (int i = 0; i < spec.warmup; ++i) {
    execute_graph(*backend, graph, buffers, hooks.between_chunks);
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
    execute_converting(hooks.between_chunks, *backend, graph, m.inputs, buffers);
  }
  for (int i = 0; i < spec.repeat && !chunked; ++i) {
    if (clock.on()) {
      Stopwatch one;
      execute_graph(*backend, graph, buffers, hooks.between_chunks);
      r.execute_samples.push_back(one.seconds());
    } else {
      execute_graph(*backend, graph, buffers, hooks.between_chunks);
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
  Operation operation;
  std::shared_ptr<const ValidatedGraph> graph;  // what runs (a graph of one node for an operator)
  std::vector<Tensor> constants;                // an expression's literals as read
  std::vector<std::pair<DType, Shape>> operands;
  // The graph's output, kept here: read on every call (fits), where the graph's is a few pointers away.
  DType output_dtype{};
  Shape output_shape;
  std::uint64_t output_bytes = 0;
  // The variables the request left the choice to, and what prepare_request read of them.
  bool isa_left = false, threads_left = false;
  OptionVariables variables;
  mutable GraphBuffers buffers;  // reused: a run allocates nothing
  // A graph of one node whose backend prepares its run (Backend::prepare_run: the CPU backend's
  // kernel and loop chosen once), and where each of the node's operands is: run() calls it
  // directly. Null: run() goes through run_graph_once as run(request) does.
  std::unique_ptr<PreparedRun> prepared;
  struct Arg {
    bool input;  // else a constant
    std::size_t index;
  };
  std::array<Arg, 2> args{};
  std::size_t arg_count = 0;
  // fits(operands, out): the names of the variables left to the environment, and their text
  // last found to fit (read_option_variables() gave `variables` for it), compared in place on
  // each call; a text not yet seen to fit is parsed the full way. Per plan, and so per thread.
  std::array<std::string_view, 2> variable_names{};
  std::size_t variable_count = 0;
  mutable std::array<std::optional<std::string>, 2> fitting_texts{};
  mutable bool fitting_texts_known = false;
};

OperationPlan::OperationPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OperationPlan::OperationPlan(OperationPlan&&) noexcept = default;
OperationPlan& OperationPlan::operator=(OperationPlan&&) noexcept = default;
OperationPlan::~OperationPlan() = default;

Operation OperationPlan::op() const { return impl_->operation; }
DType OperationPlan::output_dtype() const { return impl_->output_dtype; }
const Shape& OperationPlan::output_shape() const { return impl_->output_shape; }

bool OperationPlan::fits(std::span<const BorrowedTensor> operands, const MutableTensorView& out,
                         const OptionVariables& variables) const {
  const Impl& p = *impl_;
  if (!operands_fit(operands, out)) return false;
  return (!p.isa_left || variables.isa == p.variables.isa) &&
         (!p.threads_left || variables.threads == p.variables.threads);
}

bool OperationPlan::fits(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const {
  const Impl& p = *impl_;
  if (!operands_fit(operands, out)) return false;
  if (p.variable_count == 0) return true;
  const std::span<const std::string_view> names(p.variable_names.data(), p.variable_count);
  const std::span<const std::optional<std::string>> texts(p.fitting_texts.data(), p.variable_count);
  // The same text parses to the same choice (the CPU it is checked against does not change),
  // so only a text not yet seen to fit is read the full way, which refuses what a new request
  // would refuse (the full path then words it).
  if (p.fitting_texts_known && environment_has(names, texts)) return true;
  std::array<std::optional<std::string>, 2> now{};
  for (std::size_t i = 0; i < p.variable_count; ++i) now[i] = environment_variable(std::string(names[i]));
  OptionVariables read;
  try {
    read = read_option_variables(p.isa_left, p.threads_left);
  } catch (const Error&) {
    return false;
  }
  if ((p.isa_left && read.isa != p.variables.isa) || (p.threads_left && read.threads != p.variables.threads))
    return false;
  // (Read just before the parse, so that what is kept is a text that fitted.)
  p.fitting_texts = std::move(now);
  p.fitting_texts_known = true;
  return true;
}

bool OperationPlan::operands_fit(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const {
  const Impl& p = *impl_;
  if (operands.size() != p.operands.size() || out.dtype != p.output_dtype || !(out.shape == p.output_shape))
    return false;
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (operands[i].dtype != p.operands[i].first || !(operands[i].shape == p.operands[i].second) ||
        !operands[i].strides.empty() || operands[i].byte_swapped)
      return false;
  return true;
}

void OperationPlan::run(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const {
  const Impl& p = *impl_;
  if (p.prepared) {
    std::array<const std::byte*, 2> in{};
    for (std::size_t i = 0; i < p.arg_count; ++i)
      in[i] = p.args[i].input ? operands[p.args[i].index].data : p.buffers.constants[p.args[i].index].data();
    p.prepared->run(std::span<const std::byte* const>(in.data(), p.arg_count), out.data);
    return;
  }
  p.buffers.inputs.resize(operands.size());
  for (std::size_t i = 0; i < operands.size(); ++i)
    p.buffers.inputs[i] = {operands[i].data, operands[i].shape.element_count() * dtype_info(operands[i].dtype).size};
  p.buffers.output = {out.data, p.output_bytes};
  run_graph_once(*p.backend, *p.graph, p.buffers);
}

std::optional<OperationPlan> plan_operation(const PreparedRequest& prepared, BackendCache& backends) {
  const OperationRequest& r = prepared.request();
  if (r.in_place || r.repeat + r.warmup != 1 || r.timing || r.explain_only || r.keep_result ||
      (r.output != OutputKind::memory && r.output != OutputKind::buffer))
    return std::nullopt;
  for (const auto& operand : r.operands) {
    const auto* t = std::get_if<BorrowedTensor>(&operand);
    // (An expression's literals are in its text: a name bound to a literal has become one.)
    if (!t || !t->strides.empty() || t->byte_swapped) {
      if (prepared.is_expression() && !t) continue;
      return std::nullopt;
    }
  }
  StartedRun s = start_run(prepared, LoadMode::whole, &backends, false);
  auto plan = std::make_unique<OperationPlan::Impl>();
  plan->backend = s.cached->backend;
  plan->operation = s.result.op;
  plan->graph = s.graph;
  plan->constants = std::move(s.constants);
  for (const Tensor& c : plan->constants) plan->buffers.constants.push_back(c.view().bytes());
  for (const auto& in : s.inputs) plan->operands.emplace_back(in.dtype(), in.shape());
  plan->output_dtype = plan->graph->output_dtype();
  plan->output_shape = plan->graph->output_shape();
  plan->output_bytes = plan->output_shape.byte_size(dtype_info(plan->output_dtype).size);
  plan->isa_left = r.isa.empty();
  plan->threads_left = !r.threads;
  if (plan->isa_left) plan->variables.isa = prepared.isa();
  if (plan->threads_left) plan->variables.threads = prepared.threads();
  if (plan->isa_left) plan->variable_names[plan->variable_count++] = "DMLBITS_ISA";
  if (plan->threads_left) plan->variable_names[plan->variable_count++] = "DMLBITS_THREADS";
  // run_graph_once's path for one node, its operands found once.
  if (plan->graph->nodes().size() == 1) {
    const GraphNode& node = plan->graph->output_node();
    const auto arity = static_cast<std::size_t>(node.op.op().arity);
    const auto named = [&](std::size_t i) {
      return node.args[i].kind == GraphValue::Kind::input || node.args[i].kind == GraphValue::Kind::constant;
    };
    if (arity <= plan->args.size() && (arity < 1 || named(0)) && (arity < 2 || named(1))) {
      for (std::size_t i = 0; i < arity; ++i)
        plan->args[i] = {node.args[i].kind == GraphValue::Kind::input, node.args[i].index};
      plan->arg_count = arity;
      plan->prepared = plan->backend->prepare_run(node.op);
    }
  }
  return OperationPlan(std::move(plan));
}

CachedBackends& cached_backends(BackendCache& cache) { return BackendCacheAccess::backends(cache); }

BackendCache::BackendCache() : impl_(std::make_unique<Impl>()) {}
BackendCache::~BackendCache() = default;
void BackendCache::clear() { impl_->backends.backends.clear(); }

}  // namespace dmlbits
