#include "make_backend.hpp"

#include <algorithm>
#include <array>
#include <limits>

#include <fmt/format.h>

#include "auto_rule.hpp"
#include "dmlbits/dtype.hpp"
#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "cpu_reference.hpp"
#include "d3d12_backend.hpp"
#include "directml_backend.hpp"
#include "dml_desc.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "dmlbits/request.hpp"
#include "environment.hpp"

namespace dmlbits {
namespace {
static_assert(kMaxThreads == kMaxCpuThreads, "request.hpp's limit is the CPU backend's");
// The public InstructionSet mirrors Isa value for value (instruction_set_name checks the names).
static_assert(static_cast<std::size_t>(InstructionSet::avx512) + 1 == kIsaCount);
static_assert(static_cast<int>(InstructionSet::scalar) == static_cast<int>(Isa::scalar) &&
              static_cast<int>(InstructionSet::avx2) == static_cast<int>(Isa::avx2) &&
              static_cast<int>(InstructionSet::avx512) == static_cast<int>(Isa::avx512));

// One row per BackendKind, in enum (and --help) order.
struct BackendRow {
  BackendKind kind;
  std::string_view name;
  bool uses_cpu;      // computes on CPU threads: --threads, and --isa for those with kernels
  bool uses_adapter;  // runs on a D3D12 adapter: --adapter
};
constexpr std::array<BackendRow, 5> kBackends{{
    {BackendKind::automatic, "auto", true, true},
    {BackendKind::cpu, "cpu", true, false},
    {BackendKind::d3d12, "d3d12", false, true},
    {BackendKind::directml, "directml", false, true},
    {BackendKind::cpu_reference, "cpu-reference", true, false},
}};
constexpr std::array<BackendKind, 5> kBackendKinds{BackendKind::automatic, BackendKind::cpu, BackendKind::d3d12,
                                                   BackendKind::directml, BackendKind::cpu_reference};

const BackendRow& row(BackendKind kind) { return kBackends[static_cast<std::size_t>(kind)]; }

}  // namespace

std::vector<std::string> adapter_backend_names() {
  std::vector<std::string> names;
  for (const auto& b : kBackends)
    if (b.uses_adapter && b.kind != BackendKind::automatic) names.emplace_back(b.name);
  if (row(BackendKind::automatic).uses_adapter) names.emplace_back(row(BackendKind::automatic).name);
  return names;
}

namespace {

// A backend chosen by `auto`: itself in every way, plus the reason it was chosen.
class ChosenBackend final : public Backend {
 public:
  ChosenBackend(std::unique_ptr<Backend> inner, Selection reason)
      : inner_(std::move(inner)), reason_(std::move(reason)) {}
  std::string_view name() const override { return inner_->name(); }
  bool computes_on_cpu() const override { return inner_->computes_on_cpu(); }
  DeviceDescription device_description() const override { return inner_->device_description(); }
  DeviceDescription device_description_for(const ValidatedOp& op, unsigned extra_threads,
                                           const ThreadWhy& why = {}) const override {
    return inner_->device_description_for(op, extra_threads, why);
  }
  std::optional<std::string> unsupported_reason(const ValidatedOp& op) const override {
    return inner_->unsupported_reason(op);
  }
  void run(const ValidatedOp& op, const ExecuteBuffers& buffers) override { inner_->run(op, buffers); }
  std::unique_ptr<PreparedRun> prepare_run(const ValidatedOp& op) const override { return inner_->prepare_run(op); }
  // A graph as the chosen backend runs it (fused where it fuses), not node by node through run().
  std::optional<std::string> unsupported_graph_reason(const ValidatedGraph& graph) const override {
    return inner_->unsupported_graph_reason(graph);
  }
  void run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) override {
    inner_->run_graph(graph, buffers);
  }
  bool run_staged(const ValidatedOp& op, StagedIo& io) override { return inner_->run_staged(op, io); }
  Selection selection() const override { return reason_; }
  ThreadTeam thread_team() const override { return inner_->thread_team(); }
  std::vector<PhaseTime> detail_phases() const override { return inner_->detail_phases(); }

 private:
  std::unique_ptr<Backend> inner_;
  Selection reason_;
};

// The request's resolved choices: prepare_request checked that this CPU runs its set.
std::unique_ptr<Backend> make_cpu(const PreparedRequest& p) {
  return std::make_unique<CpuBackend>(to_isa(p.isa()), CpuBackendOptions{.threads = p.threads()});
}

// auto: the CPU unless the output is large, a hardware adapter exists and decide_auto
// (auto_rule.hpp) estimates it faster. Each test is cheaper than the next, so a small run never
// loads vkd3d nor enumerates Vulkan devices.
std::unique_ptr<Backend> make_auto(const PreparedRequest& p, const std::vector<OperandInfo>& operands) {
  const std::string adapter = p.request().adapter.value_or("");
  const auto cpu = [&](Selection why) {
    why.backend = "cpu";
    return std::make_unique<ChosenBackend>(make_cpu(p), std::move(why));
  };
  const std::uint64_t output_bytes = output_size_hint(operands);
  const bool small = output_bytes < kAutoGpuMinBytes;
  const Selection too_small{
      .rule = SelectionRule::small_output, .output_bytes = output_bytes, .min_bytes = kAutoGpuMinBytes};
  if (small && adapter.empty()) return cpu(too_small);
  if (!d3d12_built())
    return cpu({.rule = SelectionRule::d3d12_not_built, .detail = *d3d12_runtime_unavailable_reason()});
  // The device nodes before the runtime: a few stats, where loading vkd3d (three libraries and
  // theirs) cost milliseconds of every 16 MiB-and-larger run on a machine with no GPU
  // (testdata/benchmarks.md, issue #29).
  if (adapter.empty())
    if (auto why = no_hardware_adapter_reason()) return cpu({.rule = SelectionRule::no_hardware, .detail = *why});
  if (auto why = d3d12_runtime_unavailable_reason())
    return cpu({.rule = SelectionRule::no_runtime, .runtime = std::string(d3d12_runtime_name()), .detail = *why});
  const AdapterList& list = gpu_adapters();
  if (list.adapters.empty()) return cpu({.rule = SelectionRule::no_adapter, .detail = list.error});
  const GpuAdapter* chosen = nullptr;
  if (!adapter.empty()) {
    chosen = &find_adapter(list.adapters, adapter);  // a wrong --adapter is an error even here
  } else {
    chosen = auto_adapter(list.adapters);
    if (!chosen) {
      Selection all_software{.rule = SelectionRule::software_only};
      for (const auto& a : list.adapters) all_software.adapters.push_back(a.name);
      return cpu(std::move(all_software));
    }
  }
  if (chosen->software || !small) {
    const AutoEstimate decision = decide_auto(
        auto_adapter_description(*chosen), AutoWork{input_size_hint(operands), output_bytes, cpu_threads(p.threads())});
    if (!decision.gpu) return cpu({.rule = SelectionRule::estimate, .estimate = decision});
    try {
      auto backend = std::make_unique<D3d12Backend>(
          D3d12BackendOptions{.adapter = std::to_string(chosen->index), .copy_threads = p.threads()});
      return std::make_unique<ChosenBackend>(
          std::move(backend), Selection{.rule = SelectionRule::estimate, .backend = "d3d12", .estimate = decision});
    } catch (const Error& e) {
      if (e.code() != Errc::backend) throw;
      return cpu({.rule = SelectionRule::device_failed, .detail = e.what()});
    }
  }
  return cpu(too_small);
}

}  // namespace

std::span<const BackendKind> backend_kinds() { return kBackendKinds; }

std::string_view backend_name(BackendKind kind) { return row(kind).name; }

std::optional<BackendKind> parse_backend(std::string_view name) {
  for (const auto& b : kBackends)
    if (b.name == name) return b.kind;
  return std::nullopt;
}

bool backend_uses_cpu(BackendKind kind) { return row(kind).uses_cpu; }
bool backend_uses_adapter(BackendKind kind) { return row(kind).uses_adapter; }

std::vector<BackendKind> built_backends() {
  std::vector<BackendKind> built;
  for (BackendKind kind : kBackendKinds) {
    if (kind == BackendKind::automatic || (kind == BackendKind::d3d12 && !d3d12_built()) ||
        (kind == BackendKind::directml && !directml_built()))
      continue;
    built.push_back(kind);
  }
  return built;
}

std::vector<std::string_view> isa_names() {
  std::vector<std::string_view> names;
  for (std::size_t i = 0; i < kIsaCount; ++i) names.push_back(isa_name(static_cast<Isa>(i)));
  return names;
}

std::string_view instruction_set_name(InstructionSet isa) { return isa_name(static_cast<Isa>(isa)); }

std::optional<Isa> to_isa(std::optional<InstructionSet> isa) {
  if (!isa) return std::nullopt;
  return static_cast<Isa>(*isa);
}

std::optional<InstructionSet> to_instruction_set(std::optional<Isa> isa) {
  if (!isa) return std::nullopt;
  return static_cast<InstructionSet>(*isa);
}

namespace {

// Per thread: a count no other thread's requests move, and no cache line shared between them.
thread_local std::uint64_t t_option_variable_reads = 0;

// DMLBITS_ISA's set, or nullopt where it is unset or empty.
std::optional<Isa> isa_variable() {
  const std::string env = environment_variable("DMLBITS_ISA").value_or("");
  if (env.empty()) return std::nullopt;
  const auto isa = parse_isa(env);
  if (!isa)
    throw Error(Errc::usage,
                fmt::format("DMLBITS_ISA: unknown instruction set '{}' (known: {})", env, isa_names_help()));
  try {
    return require_isa(*isa);
  } catch (const Error& e) {
    rethrow_with_context(e, "DMLBITS_ISA");
  }
}

// DMLBITS_THREADS' count, or 0 where it is unset or empty.
unsigned threads_variable() {
  const std::string env = environment_variable("DMLBITS_THREADS").value_or("");
  if (env.empty()) return 0;
  if (const auto n = parse_thread_count(env)) return *n;
  throw Error(Errc::usage,
              fmt::format("DMLBITS_THREADS: '{}' is not a thread count from 1 to {}", env, kMaxCpuThreads));
}

}  // namespace

std::uint64_t option_variable_reads() { return t_option_variable_reads; }

OptionVariables read_option_variables(bool isa, bool threads) {
  OptionVariables v;
  if (!isa && !threads) return v;
  ++t_option_variable_reads;
  if (isa) v.isa = to_instruction_set(isa_variable());  // usage if unknown, unsupported if the CPU lacks it
  if (threads) v.threads = threads_variable();          // usage unless 1 to 256
  return v;
}

CpuChoice check_backend_choice(BackendKind kind, const std::string& isa, const std::string& adapter,
                               std::optional<unsigned> threads) {
  const std::string_view name = backend_name(kind);
  if (!isa.empty()) {
    // The instruction set is the SIMD kernels' choice: the reference has none.
    if (!backend_uses_cpu(kind) || kind == BackendKind::cpu_reference)
      throw OptionError(OptionKey::isa, OptionRule::not_for_backend, isa, std::string(name));
    parse_isa_option(isa);
  }
  if (threads && *threads != 0) {
    if (!backend_uses_cpu(kind))
      throw OptionError(OptionKey::threads, OptionRule::not_for_backend, std::to_string(*threads), std::string(name));
    check_threads_option(*threads);
  }
  if (!adapter.empty() && !backend_uses_adapter(kind))
    throw OptionError(OptionKey::adapter, OptionRule::not_for_backend, adapter, std::string(name),
                      adapter_backend_names());
  if (threads && *threads == 0) check_threads_option(0);  // refused as a count, whatever the backend
  CpuChoice choice;
  if (!isa.empty()) choice.isa = require_isa(*parse_isa(isa));
  if (threads) choice.threads = *threads;
  // The variables that stand for an option are checked wherever that option would be, for every
  // backend: the option, when given, overrides its variable, which is then not read.
  const OptionVariables variables = read_option_variables(isa.empty(), !threads);
  if (isa.empty()) choice.isa = to_isa(variables.isa);
  if (!threads) choice.threads = variables.threads;
  return choice;
}

std::unique_ptr<Backend> make_backend(const PreparedRequest& request, const std::vector<OperandInfo>& operands) {
  const OperationRequest& r = request.request();
  switch (request.backend()) {
    case BackendKind::cpu:
      return make_cpu(request);
    case BackendKind::cpu_reference:
      return std::make_unique<CpuReferenceBackend>();
    case BackendKind::d3d12: {
      D3d12BackendOptions o;
      o.adapter = r.adapter.value_or("");
      o.copy_threads = request.threads();
      return std::make_unique<D3d12Backend>(std::move(o));
    }
    case BackendKind::directml: {
      DirectmlBackendOptions o;
      o.adapter = r.adapter.value_or("");  // the d3d12 backend's device on that adapter
      return std::make_unique<DirectmlBackend>(std::move(o));
    }
    case BackendKind::automatic:
      break;
  }
  return make_auto(request, operands);
}

std::uint64_t output_size_hint(const std::vector<OperandInfo>& operands) {
  if (operands.empty()) return 0;
  Shape shape = operands.front().shape;
  std::size_t width = 0;
  for (const auto& o : operands) {
    auto b = broadcast_shapes(shape, o.shape);
    if (!b) return 0;
    shape = *b;
    width = std::max(width, dtype_info(o.dtype).size);
  }
  const std::uint64_t n = shape.element_count();
  return n > std::numeric_limits<std::uint64_t>::max() / width ? std::numeric_limits<std::uint64_t>::max() : n * width;
}

std::uint64_t input_size_hint(const std::vector<OperandInfo>& operands) {
  std::uint64_t total = 0;
  for (const auto& o : operands) {
    const std::uint64_t n = o.shape.element_count(), width = dtype_info(o.dtype).size;
    if (n > (std::numeric_limits<std::uint64_t>::max() - total) / width)
      return std::numeric_limits<std::uint64_t>::max();
    total += n * width;
  }
  return total;
}

}  // namespace dmlbits
