#include "dmlbits/request.hpp"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "dmlbits/error.hpp"
#include "io.hpp"
#include "dmlbits/process.hpp"
#include "dmlbits/timing.hpp"
#include "make_backend.hpp"
#include "operation_output.hpp"
#include "dmlbits/options.hpp"
#include "run.hpp"
#include "stats_json.hpp"

namespace dmlbits {
namespace {

// The verbs of the operators that take an option (OptionError::choices of not_for_operator).
std::vector<std::string> verbs_taking(bool (*takes)(const OpInfo&)) {
  std::vector<std::string> verbs;
  for (const OpInfo& op : op_table())
    if (takes(op)) verbs.emplace_back(op.verb);
  return verbs;
}

// Options the operator does not take. The command line offers them only where they apply, so
// there they never reach this; manifests and Python give them by name.
void check_operator_options(const OperationRequest& r, const OpInfo& op) {
  if (r.out_dtype && op.output_dtype_is_input_dtype())
    throw OptionError(OptionKey::out_dtype, OptionRule::not_for_operator, std::string(dtype_info(*r.out_dtype).numpy_name), std::string(op.verb),
                      verbs_taking([](const OpInfo& o) { return !o.output_dtype_is_input_dtype(); }));
  if (r.shift_overflow && !op.shift)
    throw OptionError(OptionKey::shift_overflow, OptionRule::not_for_operator, std::string(shift_overflow_name(*r.shift_overflow)),
                      std::string(op.verb), verbs_taking([](const OpInfo& o) { return o.shift; }));
  // A manifest's case that gives an operator the wrong count is invalid input (status 3).
  const Errc code = r.face == RequestFace::manifest ? Errc::invalid_input : Errc::usage;
  if (r.operands.size() != static_cast<std::size_t>(op.arity))
    throw Error(code, fmt::format("{} takes {} input(s), {} given", op.verb, op.arity, r.operands.size()));
  // Python's text operands are literals only (its Python numbers and lists, written as the
  // command line writes them): a file is read with read_tensor, never by naming it as an operand.
  if (r.face == RequestFace::python)
    for (std::size_t i = 0; i < r.operands.size(); ++i)
      if (const auto* text = std::get_if<std::string>(&r.operands[i]); text && (classify_operand(*text) == OperandKind::file || classify_operand(*text) == OperandKind::standard_input))
        throw Error(Errc::usage, fmt::format("operand {}: '{}' is not a literal (literals are integers: 5, -1, 0xff, "
                                             "0b101, or JSON arrays: [1, 2])", static_cast<char>('A' + i), *text));
}

void check_in_place(const OperationRequest& r, const OpInfo& op) {
  if (!r.in_place) return;
  if (!op.allows_in_place()) {
    std::string dml = op.dml_operator_name();
    if (dml.starts_with("DML_OPERATOR_ELEMENT_WISE_")) dml.erase(0, std::strlen("DML_OPERATOR_ELEMENT_WISE_"));
    throw OptionError(OptionKey::in_place, OptionRule::not_offered, {}, dml);
  }
  if (!r.path.empty() || r.output == OutputKind::file) throw Error(Errc::usage, "--in-place and -o cannot be combined");
  if (const auto* text = std::get_if<std::string>(&r.operands.front())) {
    if (classify_operand(*text) != OperandKind::file) throw Error(Errc::usage, "--in-place needs input A to be a file");
  } else if (!std::get<BorrowedTensor>(r.operands.front()).writable) {
    throw Error(Errc::usage, "in place: operand A is borrowed read-only");
  }
}

// Where a file output goes and as what: without a path, JSON on standard output; "-" and devices
// default to .npy. Refuses an output whose format cannot be told, and binary .npy to a terminal.
// Called by run() when the target is needed (in place, the format is A's, from its header).
OutputTarget output_target(const OperationRequest& r) {
  std::optional<TensorFormat> format = r.format;
  std::string path = r.path;
  if (r.in_place) path = std::get<std::string>(r.operands.front());
  if (path.empty()) {
    path.assign(1, '-');  // (not = "-": GCC 12 -Wrestrict false positive)
    if (!format) format = TensorFormat::json;
  }
  if (!format && path == "-") format = TensorFormat::npy;
  if (!format && r.in_place) format = inspect_input(path).format;  // keep A's format (reads its header only)
  if (!format) format = format_from_extension(path);
  if (!format && is_device_or_pipe(path)) format = TensorFormat::npy;  // /dev/null, a FIFO
  if (!format)
    throw Error(Errc::usage, fmt::format("cannot tell the output format from '{}': name it .npy or .json, or use --format", path));
  if (path == "-" && *format == TensorFormat::npy && standard_output_is_terminal())
    throw Error(Errc::usage, "refusing to write binary .npy to a terminal; redirect it, or use --format json");
  OutputTarget target{path, *format};
  target.json.hex = r.hex;
  return target;
}

OperationSpec to_spec(const PreparedRequest& p, const RunHooks& hooks, BackendCache* backends) {
  const OperationRequest& r = p.request();
  OperationSpec spec;
  spec.op = r.op;
  spec.operands = r.operands;
  spec.level = p.level();
  spec.out_dtype = r.out_dtype;
  spec.dtype = r.dtype;
  spec.shift_overflow = p.shift_overflow();
  spec.in_place = r.in_place;
  spec.backend = p.backend();
  spec.isa = r.isa;
  spec.threads = r.threads.value_or(0);
  spec.adapter = r.adapter.value_or("");
  spec.repeat = r.repeat;
  spec.warmup = r.warmup;
  spec.explain_only = r.explain_only;
  if (r.output == OutputKind::buffer) spec.output_buffer = r.buffer;
  spec.face = r.face;
  spec.timed = r.timing || hooks.on_validated;
  spec.between_chunks = hooks.between_chunks;
  if (r.output == OutputKind::memory) spec.allocate_result = hooks.allocate_result;
  spec.backends = backends;
  return spec;
}

}  // namespace

void check_backend_choice(BackendKind kind, const std::string& isa, const std::string& adapter,
                          std::optional<unsigned> threads) {
  BackendOptions options;
  options.isa = isa;
  options.threads = threads.value_or(0);
  options.adapter = adapter;
  check_backend_options(kind, options);
  if (threads) check_threads_option(*threads);
  if (!isa.empty()) require_isa(*parse_isa(isa));
  // The variables that stand for an option are checked wherever that option would be, for every
  // backend: the option, when given, overrides its variable, which is then not read.
  if (isa.empty()) (void)isa_override();  // DMLBITS_ISA: usage if unknown, unsupported if the CPU lacks it
  if (!threads) (void)cpu_threads(0);     // DMLBITS_THREADS: usage unless 1 to 256
}

void check_repeat(int repeat, int warmup, bool in_place) {
  check_repeat_option(repeat, warmup);
  if (in_place && repeat + warmup > 1) throw OptionError(OptionKey::in_place, OptionRule::runs_once);
}

PreparedRequest prepare_request(OperationRequest r) {
  const OpInfo& op = op_info(r.op);
  check_operator_options(r, op);
  check_in_place(r, op);
  if (r.adapter) check_adapter_option(*r.adapter);
  if (r.output == OutputKind::buffer && !r.buffer) throw Error(Errc::usage, "an output buffer is needed");
  if (!r.backend) r.backend = BackendKind::automatic;
  check_backend_choice(*r.backend, r.isa, r.adapter.value_or(""), r.threads);
  check_repeat(r.repeat, r.warmup, r.in_place);
  if (!r.level) r.level = newest_feature_level();
  if (!r.shift_overflow) r.shift_overflow = kDefaultShiftOverflow;
  return PreparedRequest(std::move(r));
}

OperationSummary summarize(const ValidatedOp& op) {
  return {op.op().kind, op.level(), op.input_dtype(), op.output_dtype(), op.output_shape(), op.in_place()};
}

std::string explain_json(const ValidatedOp& op) { return to_json(op.desc()).dump(2) + "\n"; }

RunResult run(const PreparedRequest& p, const RunHooks& hooks, BackendCache* backends) {
  const OperationRequest& r = p.request();
  const OperationSpec spec = to_spec(p, hooks, backends);
  OutputRequest out;
  if (r.output == OutputKind::automatic || r.output == OutputKind::file) {
    if (!r.in_place || std::holds_alternative<std::string>(r.operands.front()))
      out.target = [&r] { return output_target(r); };
  }
  out.keep_result = r.keep_result || (r.output == OutputKind::memory && !spec.allocate_result);
  if (hooks.before_write)
    out.before_write = [&hooks](const OperationResult& m) {
      std::vector<TensorView> inputs;
      for (const auto& in : m.inputs) inputs.push_back(in.view());
      hooks.before_write(*m.op, inputs);
    };
  out.on_validated = hooks.on_validated;
  out.progress = hooks.progress;
  OutputRun o = run_to_output(spec, out);
  RunResult result;
  result.op = std::move(o.op);
  result.timing = std::move(o.timing);
  result.execute_samples = std::move(o.execute_samples);
  result.result = std::move(o.result);
  result.streamed = o.streamed;
  result.warmup = r.warmup;
  return result;
}

std::string timing_json(const RunResult& r) {
  const RunTiming& t = r.timing;
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& p : t.phases) phases[p.name + "_s"] = p.seconds;
  const SampleStats s = compute_stats(r.execute_samples);
  nlohmann::json backend_phases = nlohmann::json::object();
  for (const auto& p : t.backend_phases) backend_phases[p.name + "_s"] = p.seconds;
  const OperationSummary what = summarize(*r.op);
  const nlohmann::json j = {
      {"op", op_info(what.op).verb},
      {"dtype", dtype_info(what.input_dtype).numpy_name},
      {"shape", what.output_shape.dims()},
      {"feature_level", what.level.short_name()},
      {"backend", t.backend},
      {"device", t.device},
      {"selection", t.selection},
      {"phases", phases},
      {"backend_phases", backend_phases},
      {"total_s", t.total_seconds},
      {"execute_bytes", t.execute_bytes},
      {"execute_runs", t.execute_runs},
      {"execute_gbps", t.execute_gbps()},
      {"execute",
       {{"warmup", r.warmup},
        {"samples_s", r.execute_samples},
        {"stats_s", to_json(s)},
        {"gbps_at_median", s.median > 0 ? static_cast<double>(t.execute_bytes) / s.median / 1e9 : 0.0}}}};
  return j.dump(2) + "\n";
}

struct OperationPlan::Impl {
  std::shared_ptr<Backend> backend;
  std::shared_ptr<const ValidatedOp> op;
  std::vector<std::pair<DType, Shape>> operands;
  std::string isa, isa_variable;  // the request's isa, and DMLBITS_ISA's value when it was ""
  unsigned threads = 0;           // the same for threads and DMLBITS_THREADS
  std::string threads_variable;
  mutable ExecuteBuffers buffers;  // reused: a run allocates nothing
};

OperationPlan::OperationPlan(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OperationPlan::OperationPlan(OperationPlan&&) noexcept = default;
OperationPlan& OperationPlan::operator=(OperationPlan&&) noexcept = default;
OperationPlan::~OperationPlan() = default;

const ValidatedOp& OperationPlan::op() const { return *impl_->op; }
DType OperationPlan::output_dtype() const { return impl_->op->output_dtype(); }
const Shape& OperationPlan::output_shape() const { return impl_->op->output_shape(); }

bool OperationPlan::fits(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const {
  const Impl& p = *impl_;
  if (operands.size() != p.operands.size() || out.dtype != p.op->output_dtype() || !(out.shape == p.op->output_shape()))
    return false;
  for (std::size_t i = 0; i < operands.size(); ++i)
    if (operands[i].dtype != p.operands[i].first || !(operands[i].shape == p.operands[i].second) ||
        !operands[i].strides.empty() || operands[i].byte_swapped)
      return false;
  return isa_variable(p.isa) == p.isa_variable && threads_variable(p.threads) == p.threads_variable;
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
  const OperationSpec spec = to_spec(prepared, {}, &backends);
  const std::vector<LoadedOperand> inputs = load_operands(spec.operands, spec.dtype);
  std::unique_ptr<Backend> owned;
  BackendCache::Impl::Entry* entry = nullptr;
  operation_backend(spec, inputs, owned, &entry);
  auto plan = std::make_unique<OperationPlan::Impl>();
  plan->backend = entry->backend;
  plan->op = validated_operation(spec, inputs, *entry->backend, entry);
  for (const auto& in : inputs) plan->operands.emplace_back(in.dtype(), in.shape());
  plan->isa = spec.isa;
  plan->isa_variable = entry->key.isa_variable;
  plan->threads = spec.threads;
  plan->threads_variable = entry->key.threads_variable;
  return OperationPlan(std::move(plan));
}

BackendCache::BackendCache() : impl_(std::make_unique<Impl>()) {}
BackendCache::~BackendCache() = default;
void BackendCache::clear() { impl_->backends.clear(); }

}  // namespace dmlbits
