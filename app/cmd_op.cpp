// dmlbits and|or|xor|shl|shr A B, dmlbits not|popcount A: one subcommand per operator-table row.
#include <unistd.h>

#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/operand.hpp"
#include "dmlbits/timing.hpp"
#include "dmlbits/validate.hpp"
#include "report.hpp"

namespace dmlbits::app {
namespace {

struct OpOptions {
  OpKind op{};
  std::string a, b;
  std::vector<std::string> operands() const {
    if (b.empty() && op_info(op).arity == 1) return {a};
    return {a, b};
  }
  std::string output;
  std::string format;
  bool in_place = false;
  std::string feature_level = newest_feature_level().short_name();
  std::string shift_overflow = "zero";
  std::string out_dtype;
  std::string dtype;
  std::string backend = "cpu";
  bool hex = false;
  bool explain = false;
  std::string explain_json;
  bool time = false;
  std::string time_json;
  bool verbose = false;
};

std::optional<DType> dtype_option(const std::string& name, const char* option) {
  if (name.empty()) return std::nullopt;
  auto d = parse_dtype_name(name);
  if (!d) throw Error(Errc::usage, fmt::format("{}: unknown data type '{}' (known: {})", option, name, dtype_names_help()));
  return d;
}

// Writes a small text file (a report), atomically.
void write_text_file(const std::string& path, const std::string& text) {
  OutputFile f(path);
  f.write(text);
  f.commit();
}

void run_op(const OpOptions& o) {
  const OpInfo& op = op_info(o.op);
  Stopwatch total;
  Stopwatch phase;
  RunTiming timing;

  // Syntax: everything the command line alone decides.
  const auto level = parse_feature_level(o.feature_level);
  if (!level)
    throw Error(Errc::usage, fmt::format("--feature-level: unknown level '{}' (1_0 to {}, also written 4.1 or "
                                         "DML_FEATURE_LEVEL_4_1)", o.feature_level, newest_feature_level().short_name()));
  const auto out_dtype = dtype_option(o.out_dtype, "--out-dtype");
  const auto dtype = dtype_option(o.dtype, "--dtype");
  std::optional<TensorFormat> format;
  if (!o.format.empty()) format = parse_format_name(o.format);
  if (o.in_place && !o.output.empty()) throw Error(Errc::usage, "--in-place and -o cannot be combined");
  if (o.in_place && classify_operand(o.a) != OperandKind::file)
    throw Error(Errc::usage, "--in-place needs input A to be a file");
  auto backend = make_backend(o.backend);

  std::vector<LoadedOperand> inputs = load_operands(o.operands(), dtype);
  timing.phases.push_back({"read", phase.lap()});

  OpRequest request;
  request.op = o.op;
  request.level = *level;
  for (const auto& in : inputs) request.inputs.push_back({in.tensor.dtype(), in.tensor.shape()});
  request.out_dtype = out_dtype;
  request.shift_overflow = o.shift_overflow == "wrap" ? ShiftOverflow::wrap : ShiftOverflow::zero;
  request.in_place = o.in_place;
  const ValidatedOp v = validate(request);
  if (auto why = backend->unsupported_reason(v))
    throw Error(Errc::unsupported, fmt::format("{}: the {} backend cannot run this: {}", op.verb, backend->name(), *why));
  timing.phases.push_back({"validate", phase.lap()});

  const std::string explain = to_json(v.desc()).dump(2) + "\n";
  if (o.explain) {
    std::cout << explain;
    return;
  }
  if (!o.explain_json.empty()) write_text_file(o.explain_json, explain);
  if (o.verbose)
    std::cerr << fmt::format("dmlbits: {} on {} ({}), {} at {}\n", op.verb, backend->name(),
                             backend->device_description(), dtype_info(v.input_dtype()).dml_name,
                             v.level().enum_name());

  // Execute. In place, the output is input A's own buffer (DirectML allows the alias).
  Tensor result;
  ExecuteBuffers buffers;
  for (const auto& in : inputs) buffers.inputs.push_back({in.tensor.data(), in.tensor.byte_size()});
  Tensor* out = &result;
  if (o.in_place) out = &inputs[0].tensor;
  else result = Tensor(v.output_dtype(), v.output_shape());
  buffers.output = {out->data(), out->byte_size()};
  backend->run(v, buffers);
  timing.phases.push_back({"execute", phase.lap()});
  timing.execute_bytes = out->byte_size();
  for (const auto& in : inputs) timing.execute_bytes += in.tensor.byte_size();

  // Write.
  std::string path = o.in_place ? o.a : o.output;
  if (path.empty()) {
    path = "-";
    if (!format) format = TensorFormat::json;
  }
  if (!format && path == "-") format = TensorFormat::npy;
  if (!format && o.in_place) {
    // Keep input A's format.
    InputBytes a = InputBytes::open(path);
    format = detect_format(a.bytes());
  }
  if (!format) format = format_from_extension(path);
  if (!format)
    throw Error(Errc::usage, fmt::format("cannot tell the output format from '{}': name it .npy or .json, or use --format", path));
  if (path == "-" && *format == TensorFormat::npy && ::isatty(STDOUT_FILENO))
    throw Error(Errc::usage, "refusing to write binary .npy to a terminal; redirect it, or use --format json");
  write_tensor(out->view(), path, *format, JsonWriteOptions{o.hex});
  timing.phases.push_back({"write", phase.lap()});
  timing.total_seconds = total.seconds();
  timing.backend = std::string(backend->name());
  timing.device = backend->device_description();

  if (o.time) std::cerr << timing_text(timing);
  if (!o.time_json.empty()) write_text_file(o.time_json, timing_json(timing).dump(2) + "\n");
}

std::string level_choices() {
  std::string out;
  for (auto l : feature_levels()) out += (out.empty() ? "" : ", ") + l.short_name();
  return out;
}

}  // namespace

void setup_op_commands(CLI::App& app) {
  for (const auto& op : op_table()) {
    auto opt = std::make_shared<OpOptions>();
    opt->op = op.kind;
    auto* sub = app.add_subcommand(std::string(op.verb),
                                   fmt::format("{} ({}, from {})", op.summary, op.dml_operator_name(),
                                               op.introduced().enum_name()));
    for (const auto& alias : op.aliases()) sub->alias(alias);
    const std::string operand_help =
        "a .npy or JSON file, - for standard input, or a literal (5, 0xff, 0b101, [1,2,3]); ./NAME for a file named like a literal";
    // One string per operand: a JSON array literal contains commas and must stay whole.
    sub->add_option("A", opt->a, (op.arity == 2 ? "First input: " : "Input: ") + operand_help)->required();
    if (op.arity == 2) sub->add_option("B", opt->b, "Second input (the shift count for shifts): " + operand_help)->required();
    sub->add_option("-o,--output", opt->output,
                    "Write the result to FILE (- for standard output, as .npy unless --format json); "
                    "without -o the result is printed as JSON");
    sub->add_option("--format", opt->format, "Output format (default: from the extension)")
        ->check(CLI::IsMember({"npy", "json"}));
    if (op.allows_in_place())
      sub->add_flag("--in-place", opt->in_place, "Write the result over input A (atomically)");
    sub->add_option("-l,--feature-level", opt->feature_level,
                    "DirectML feature level: " + level_choices() + " (also 4.1, DML_FEATURE_LEVEL_4_1)")
        ->capture_default_str();
    if (op.kind == OpKind::shl || op.kind == OpKind::shr)
      sub->add_option("--shift-overflow", opt->shift_overflow,
                      "Counts >= the element width: zero (result 0) or wrap (count modulo width)")
          ->check(CLI::IsMember({"zero", "wrap"}))
          ->capture_default_str();
    if (!op.output_dtype_is_input_dtype())
      sub->add_option("--out-dtype", opt->out_dtype, "Output data type: uint8 (default) or uint32");
    sub->add_option("--dtype", opt->dtype, "Data type for literals and JSON inputs that name none (default: the other operand's)");
    std::string backends;
    for (auto b : backend_names()) backends += (backends.empty() ? "" : ", ") + std::string(b);
    sub->add_option("--backend", opt->backend, "Backend: " + backends)->capture_default_str();
    sub->add_flag("--hex", opt->hex, "JSON output: every value as its bit pattern in hex");
    sub->add_flag("--explain", opt->explain, "Print the DirectML operator description as JSON and exit without running");
    sub->add_option("--explain-json", opt->explain_json, "Run, and write the DirectML operator description to FILE");
    sub->add_flag("--time", opt->time, "Print the time of each phase to standard error");
    sub->add_option("--time-json", opt->time_json, "Write the time of each phase to FILE as JSON");
    sub->add_flag("-v,--verbose", opt->verbose, "Say which backend and device run the operator");
    sub->footer(exit_status_summary());
    sub->final_callback([opt] { run_op(*opt); });
  }
}

}  // namespace dmlbits::app
