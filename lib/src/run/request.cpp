#include "dmlbits/request.hpp"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "dmlbits/error.hpp"
#include "io.hpp"
#include "dmlbits/timing.hpp"
#include "make_backend.hpp"
#include "option_words.hpp"
#include "stats_json.hpp"

namespace dmlbits {
namespace {

// An operator option a manifest names as a key is refused as that key ("out_dtype"); the other
// faces spell it as option_word does.
std::string option_name(RequestFace face, std::string_view key) {
  if (face == RequestFace::manifest) return fmt::format("\"{}\"", key);
  return option_word(face, key);
}

// Options the operator does not take. The command line offers them only where they apply, so
// there they never reach this; manifests and Python give them by name.
void check_operator_options(const OperationRequest& r, const OpInfo& op) {
  const Errc code = r.face == RequestFace::manifest ? Errc::invalid_input : Errc::usage;
  if (r.out_dtype && op.output_dtype_is_input_dtype())
    throw Error(code, fmt::format("{} does not apply to {} (only popcount takes it)", option_name(r.face, "out_dtype"),
                                  op.verb));
  if (r.shift_overflow && !op.shift)
    throw Error(code, fmt::format("{} does not apply to {} (only shl and shr take it)",
                                  option_name(r.face, "shift_overflow"), op.verb));
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
    throw Error(Errc::usage, fmt::format("{} is not offered: DirectML does not let {}'s output alias its input",
                                         option_word(r.face, "in_place"), dml));
  }
  if (!r.path.empty() || r.output == OutputKind::file) throw Error(Errc::usage, "--in-place and -o cannot be combined");
  if (const auto* text = std::get_if<std::string>(&r.operands.front())) {
    if (classify_operand(*text) != OperandKind::file) throw Error(Errc::usage, "--in-place needs input A to be a file");
  } else if (!std::get<BorrowedTensor>(r.operands.front()).writable) {
    throw Error(Errc::usage, "in place: operand A is borrowed read-only");
  }
}

// The rule for repeat, warmup and in place (Errc::usage), worded for `face` (the command line's
// words, or Python's keywords).
void check_repeat(int repeat, int warmup, bool in_place, RequestFace face) {
  const std::string repeat_word = option_word(face, "repeat"), warmup_word = option_word(face, "warmup");
  if (repeat < 1 || warmup < 0)
    throw Error(Errc::usage, fmt::format("{} must be at least 1 and {} at least 0", repeat_word, warmup_word));
  if (in_place && repeat + warmup > 1)
    throw Error(Errc::usage, fmt::format("{} runs once: it cannot be combined with {} or {}",
                                         option_word(face, "in_place"), repeat_word, warmup_word));
}

}  // namespace

std::string option_word(RequestFace face, std::string_view key, OptionSpelling spelling) {
  if (face != RequestFace::python) {
    std::string flag = "--" + std::string(key);
    for (auto& c : flag)
      if (c == '_') c = '-';
    return flag;
  }
  if (key == "in_place") return "out=x (in place)";
  return spelling == OptionSpelling::argument ? fmt::format("{}=", key) : std::string(key);
}

void check_backend_choice(BackendKind kind, const std::string& isa, const std::string& adapter,
                          std::optional<unsigned> threads, RequestFace face) {
  BackendOptions options;
  options.isa = isa;
  options.threads = threads.value_or(0);
  options.adapter = adapter;
  check_backend_options(kind, options, face);
  if (threads && *threads == 0)
    throw Error(Errc::usage, fmt::format("{}: 0 is not from 1 to {}", option_word(face, "threads"), kMaxThreads));
  if (!isa.empty()) require_isa(*parse_isa(isa));
  // The variables that stand for an option are checked wherever that option would be, for every
  // backend: the option, when given, overrides its variable, which is then not read.
  if (isa.empty()) (void)isa_override();  // DMLBITS_ISA: usage if unknown, unsupported if the CPU lacks it
  if (!threads) (void)cpu_threads(0);     // DMLBITS_THREADS: usage unless 1 to 256
}

PreparedRequest prepare_request(OperationRequest r) {
  const OpInfo& op = op_info(r.op);
  check_operator_options(r, op);
  check_in_place(r, op);
  if (r.adapter && r.adapter->empty())
    throw Error(Errc::usage, fmt::format("{}: an empty name matches no adapter (give an index or part of a name)",
                                         option_word(r.face, "adapter")));
  if (r.output == OutputKind::buffer && !r.buffer) throw Error(Errc::usage, "an output buffer is needed");
  if (!r.backend) r.backend = BackendKind::automatic;
  check_backend_choice(*r.backend, r.isa, r.adapter.value_or(""), r.threads, r.face);
  check_repeat(r.repeat, r.warmup, r.in_place, r.face);
  if (!r.level) r.level = newest_feature_level();
  if (!r.shift_overflow) r.shift_overflow = kDefaultShiftOverflow;
  return PreparedRequest(std::move(r));
}

OperationSummary summarize(const ValidatedOp& op) {
  return {op.op().kind, op.level(), op.input_dtype(), op.output_dtype(), op.output_shape(), op.in_place()};
}

std::string explain_json(const ValidatedOp& op) { return to_json(op.desc()).dump(2) + "\n"; }

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
        {"stats_s", to_json(s)},
        {"gbps_at_median", s.median > 0 ? static_cast<double>(t.execute_bytes) / s.median / 1e9 : 0.0}}}};
  return j.dump(2) + "\n";
}

}  // namespace dmlbits
