#include "dmlbits/request.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "dmlbits/error.hpp"
#include "io.hpp"
#include "dmlbits/timing.hpp"
#include "evaluate.hpp"
#include "make_backend.hpp"
#include "operation_access.hpp"
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
    throw OptionError(OptionKey::out_dtype, OptionRule::not_for_operator,
                      std::string(dtype_info(*r.out_dtype).numpy_name), std::string(op.verb),
                      verbs_taking([](const OpInfo& o) { return !o.output_dtype_is_input_dtype(); }));
  if (r.shift_overflow && !op.shift)
    throw OptionError(OptionKey::shift_overflow, OptionRule::not_for_operator,
                      std::string(shift_overflow_name(*r.shift_overflow)), std::string(op.verb),
                      verbs_taking([](const OpInfo& o) { return o.shift; }));
  if (r.operands.size() != static_cast<std::size_t>(op.arity))
    throw Error(Errc::usage, fmt::format("{} takes {} input(s), {} given", op.verb, op.arity, r.operands.size()));
}

void check_in_place(const OperationRequest& r, const OpInfo& op) {
  if (!r.in_place) return;
  if (!op.allows_in_place()) {
    std::string dml = op.dml_operator_name();
    if (dml.starts_with("DML_OPERATOR_ELEMENT_WISE_")) dml.erase(0, std::strlen("DML_OPERATOR_ELEMENT_WISE_"));
    throw OptionError(OptionKey::in_place, OptionRule::not_offered, {}, dml);
  }
  if (!r.path.empty() || r.output == OutputKind::file) throw OptionError(OptionKey::in_place, OptionRule::with_output);
  if (const auto* text = std::get_if<std::string>(&r.operands.front())) {
    if (classify_operand(*text) != OperandKind::file)
      throw OptionError(OptionKey::in_place, OptionRule::needs_file, *text);
  } else if (!std::get<BorrowedTensor>(r.operands.front()).writable) {
    throw OptionError(OptionKey::in_place, OptionRule::read_only);
  }
}

// The rule for repeat, warmup and in place (OptionError).
void check_repeat(int repeat, int warmup, bool in_place) {
  check_repeat_option(repeat, warmup);
  if (in_place && repeat + warmup > 1) throw OptionError(OptionKey::in_place, OptionRule::runs_once);
}

// What a program may hand the library that no face's parser would make: refused as the faces
// refuse their own mistakes (Errc::usage), never a crash. An empty name is a usage error
// wherever it appears (the command line's -o '' is one).
void check_operands(const OperationRequest& r) {
  for (std::size_t i = 0; i < r.operands.size(); ++i) {
    const char name = static_cast<char>('A' + i);
    if (const auto* text = std::get_if<std::string>(&r.operands[i])) {
      if (text->empty()) throw Error(Errc::usage, fmt::format("input {}: an empty name names no file", name));
      continue;
    }
    const BorrowedTensor& t = std::get<BorrowedTensor>(r.operands[i]);
    dtype_info(t.dtype);  // a DType outside the table is refused there
    if (!t.strides.empty() && t.strides.size() != t.shape.rank())
      throw Error(Errc::usage, fmt::format("input {}: {} strides for a tensor of {} dimensions", name, t.strides.size(),
                                           t.shape.rank()));
    if (t.data == nullptr && t.shape.element_count() != 0)
      throw Error(Errc::usage, fmt::format("input {}: a borrowed tensor of shape {} has no data (null)", name,
                                           t.shape.to_list_string()));
  }
}

void check_output(const OperationRequest& r) {
  if (r.output == OutputKind::file && r.path.empty()) throw OptionError(OptionKey::output, OptionRule::empty);
  if (r.output == OutputKind::buffer) {
    if (!r.buffer) throw Error(Errc::usage, "an output buffer is needed");
    dtype_info(r.buffer->dtype);
    if (r.buffer->data == nullptr && r.buffer->shape.element_count() != 0)
      throw Error(Errc::usage,
                  fmt::format("the output buffer of shape {} has no data (null)", r.buffer->shape.to_list_string()));
  }
}

}  // namespace

std::vector<std::string> expression_names(const std::string& expression) {
  return expr::parse_expression(expression).names;
}

PreparedRequest prepare_request(OperationRequest r) {
  std::optional<BoundExpression> bound;
  if (!r.expression.empty() || !r.names.empty()) {
    bound = bind_expression(r);
    if (r.in_place) throw Error(Errc::usage, "an expression's result is never written in place, over an operand");
    // The expression's last operator stands for it in the checks below that name an operator.
    r.op = bound->expression->nodes[static_cast<std::size_t>(bound->expression->root)].op;
  }
  const OpInfo& op = op_info(r.op);
  check_operands(r);
  check_output(r);
  if (r.level && std::find(feature_levels().begin(), feature_levels().end(), *r.level) == feature_levels().end())
    throw OptionError(OptionKey::feature_level, OptionRule::unknown_name, r.level->short_name(), {},
                      option_choices(OptionKey::feature_level));
  if (r.dtype) dtype_info(*r.dtype);
  if (r.out_dtype) dtype_info(*r.out_dtype);
  if (r.shift_overflow && std::find(shift_overflow_modes().begin(), shift_overflow_modes().end(), *r.shift_overflow) ==
                              shift_overflow_modes().end())
    throw OptionError(OptionKey::shift_overflow, OptionRule::unknown_name,
                      std::to_string(static_cast<int>(*r.shift_overflow)), {},
                      option_choices(OptionKey::shift_overflow));
  if (!bound) {
    check_operator_options(r, op);
    check_in_place(r, op);
  }
  if (r.adapter) check_adapter_option(*r.adapter);
  if (!r.backend) r.backend = BackendKind::automatic;
  const CpuChoice cpu = check_backend_choice(*r.backend, r.isa, r.adapter.value_or(""), r.threads);
  check_repeat(r.repeat, r.warmup, r.in_place);
  if (!r.level) r.level = newest_feature_level();
  if (!r.shift_overflow) r.shift_overflow = kDefaultShiftOverflow;
  PreparedRequest prepared(std::move(r), to_instruction_set(cpu.isa), cpu.threads);
  if (bound) PreparedAccess::set_expression(prepared, std::move(*bound));
  return prepared;
}

OperationSummary Operation::summary() const {
  const ValidatedOp& op = validated(*this);
  const ValidatedGraph* graph = OperationAccess::graph(*this);
  return {op.op().kind,
          op.level(),
          op.input_dtype(),
          op.output_dtype(),
          op.output_shape(),
          op.in_place(),
          graph ? graph->expression().text : std::string()};
}

std::string Operation::explain_json() const {
  if (const ValidatedGraph* graph = OperationAccess::graph(*this)) return graph_explain_json(*graph);
  return to_json(validated(*this).desc()).dump(2) + "\n";
}

std::string timing_json(const RunResult& r) {
  const RunTiming& t = r.timing;
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& p : t.phases) phases[p.name + "_s"] = p.seconds;
  const SampleStats s = compute_stats(r.execute_samples);
  nlohmann::json backend_phases = nlohmann::json::object();
  for (const auto& p : t.backend_phases) backend_phases[p.name + "_s"] = p.seconds;
  nlohmann::json measured_backend_phases = nlohmann::json::object();
  for (const auto& p : t.measured_backend_phases) measured_backend_phases[p.name + "_s"] = p.seconds;
  const OperationSummary what = r.op.summary();
  const nlohmann::json j = {
      {"op", op_info(what.op).verb},
      {"dtype", dtype_info(what.input_dtype).numpy_name},
      {"shape", what.output_shape.dims()},
      {"feature_level", what.level.short_name()},
      {"backend", t.backend},
      {"device", device_text(t.device)},
      {"selection", selection_text(t.selection)},
      {"phases", phases},
      {"backend_phases", backend_phases},
      {"total_s", t.total_seconds},
      {"execute_bytes", t.execute_bytes},
      {"execute_runs", t.execute_runs},
      {"execute_gbps", t.execute_gbps()},
      {"execute",
       {{"warmup", r.warmup},
        {"samples_s", r.execute_samples},
        {"backend_phases", measured_backend_phases},
        {"stats_s", to_json(s)},
        {"gbps_at_median", s.median > 0 ? static_cast<double>(t.execute_bytes) / s.median / 1e9 : 0.0}}}};
  return j.dump(2) + "\n";
}

}  // namespace dmlbits
