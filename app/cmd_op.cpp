// dmlbits VERB A [B]: one subcommand per operator-table row, made from the row (its arity, options
// and words).
#include <iostream>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "app.hpp"
#include "dmlbits/check.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "dmlbits/request.hpp"
#include "dmlbits/tensor.hpp"
#include "report.hpp"

namespace dmlbits::app {
namespace {

struct OpOptions {
  OpKind op{};
  std::string a, b;
  // `dmlbits eval EXPRESSION NAME=INPUT...` (op is then unused).
  bool eval = false;
  std::string expression;
  std::vector<std::string> bindings;
  std::string output;
  std::string format;
  bool json = false;  // --json: --format json
  bool in_place = false;
  // The library's parsers read these as CLI11 reads them (add_parsed_option).
  FeatureLevel level = newest_feature_level();
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
  std::optional<DType> out_dtype;
  std::optional<DType> dtype;
  BackendKind backend = BackendKind::automatic;
  std::optional<std::string> adapter;
  std::string isa;
  std::optional<unsigned> threads;
  bool hex = false;
  bool explain = false;
  std::string explain_json;
  bool time = false;
  std::string time_json;
  int repeat = 1;
  int warmup = 0;
  std::string expect;
  bool update = false;
  std::size_t show = 10;
  std::string report_json;
  bool verbose = false;
  bool quiet = false;
  bool sync = false;
  std::string emit_dxdispatch;
  bool popcount_in_place = false;  // popcount's hidden --in-place, refused with DirectML's reason
  // Options whose presence, not value, matters (CLI11 counts them).
  CLI::Option* show_option = nullptr;
};

// An operand that is no file and no literal but looks like a number ("1.5", "nan", "+5",
// "1e2", "0xg"): most likely a value the user meant as a literal, which only integers are.
bool looks_like_number(const std::string& text) {
  std::string_view s = text;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) s.remove_prefix(1);
  if (s.empty()) return false;
  std::string lower(s);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (lower == "nan" || lower == "inf" || lower == "infinity") return true;
  return (s[0] >= '0' && s[0] <= '9') || (s[0] == '.' && s.size() > 1 && s[1] >= '0' && s[1] <= '9');
}

void check_operand(const std::string& text, const char* name) {
  if (classify_operand(text) != OperandKind::file || !looks_like_number(text)) return;
  if (path_exists(text)) return;  // a file by that name: it is read
  std::string lower(text);
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::string_view unsigned_text = lower[0] == '+' || lower[0] == '-' ? std::string_view(lower).substr(1) : lower;
  std::string advice;
  if (unsigned_text.starts_with("0x") || unsigned_text.starts_with("0b"))
    advice = fmt::format("a {} literal takes {} digits only", unsigned_text[1] == 'x' ? "hexadecimal" : "binary",
                         unsigned_text[1] == 'x' ? "0-9 and a-f" : "0 and 1");
  else if (unsigned_text == "nan" || unsigned_text.starts_with("inf"))
    advice = fmt::format("write it as an array, '[\"{}\"]'", text);
  else advice = fmt::format("write other values as an array, '[{}]'", text[0] == '+' ? text.substr(1) : text);
  throw Error(Errc::usage, fmt::format("operand {}: '{}' is not a literal (literals are integers: 5, -1, 0xff, 0b101) "
                                       "and no such file exists; {}",
                                       name, text, advice));
}

// The operands with the names messages give them: "input A", "input B"; for eval "operand 'x'"
// and the name of each NAME=INPUT (Errc::usage for a binding without '=' or of an empty name).
struct NamedInput {
  std::string name;   // the expression's name (eval), or "A", "B"
  std::string input;  // as given
  std::string role;   // "input A", "operand 'x'"
};
std::vector<NamedInput> named_inputs(const OpOptions& o) {
  std::vector<NamedInput> inputs;
  if (!o.eval) {
    inputs.push_back({"A", o.a, "input A"});
    if (op_info(o.op).arity == 2) inputs.push_back({"B", o.b, "input B"});
    return inputs;
  }
  for (const std::string& binding : o.bindings) {
    const std::size_t eq = binding.find('=');
    if (eq == std::string::npos)
      throw Error(Errc::usage, fmt::format("'{}' binds no name: give operands as NAME=INPUT (a=x.npy)", binding));
    std::string name = binding.substr(0, eq);
    if (name.empty()) throw Error(Errc::usage, fmt::format("'{}' binds an empty name: give NAME=INPUT", binding));
    inputs.push_back({name, binding.substr(eq + 1), fmt::format("operand '{}'", name)});
  }
  return inputs;
}

// --emit-dxdispatch's files: an operator's FILE-a.npy[, FILE-b.npy], an expression's
// FILE-NAME.npy per operand that is no literal (a literal is in the model itself).
DxDispatchFiles dxdispatch_files(const OpOptions& o) {
  if (!o.eval) return dxdispatch_file_names(o.emit_dxdispatch, op_info(o.op).arity);
  std::vector<std::string> names;
  for (const NamedInput& in : named_inputs(o)) {
    const OperandKind kind = classify_operand(in.input);
    if (kind != OperandKind::scalar_literal && kind != OperandKind::array_literal) names.push_back(in.name);
  }
  return dxdispatch_file_names(o.emit_dxdispatch, names);
}

// The command line's syntax turned into an OperationRequest, which prepare_request() holds to
// the rules every face shares; the rules here are the command line's own (options that only
// mean something with --expect, operands that look like numbers). Nothing is read yet.
PreparedRequest make_request(const OpOptions& o) {
  const OpInfo& op = op_info(o.op);
  OperationRequest r;
  r.op = o.op;
  const std::vector<NamedInput> inputs = named_inputs(o);
  for (const NamedInput& in : inputs) {
    r.operands.emplace_back(in.input);
    if (o.eval) r.names.push_back(in.name);
  }
  if (o.eval) r.expression = o.expression;
  r.level = o.level;
  r.out_dtype = o.out_dtype;
  r.dtype = o.dtype;
  if (op.shift || o.eval) r.shift_overflow = o.shift_overflow;
  r.in_place = o.in_place || o.popcount_in_place;  // popcount's is refused with DirectML's reason
  r.backend = o.backend;
  r.isa = o.isa;
  r.adapter = o.adapter;
  r.threads = o.threads;
  r.repeat = o.repeat;
  r.warmup = o.warmup;
  r.explain_only = o.explain;
  // With --expect the result is compared, and only written where -o or --in-place asks.
  r.output = !o.expect.empty() && o.output.empty() && !o.in_place ? OutputKind::none : OutputKind::automatic;
  r.path = o.output;
  if (const std::string format = format_choice(o.json, o.format); !format.empty()) r.format = parse_format_name(format);
  r.hex = o.hex;
  r.keep_result = !o.expect.empty();
  PreparedRequest prepared = prepare_request(std::move(r));
  // One rule for the options that only mean something with --expect: without it they are
  // refused, not ignored.
  if (o.expect.empty()) {
    if (o.update) throw Error(Errc::usage, "--update needs --expect GOLDEN");
    if (o.show_option && o.show_option->count() > 0) throw Error(Errc::usage, "--show needs --expect GOLDEN");
    if (!o.report_json.empty()) throw Error(Errc::usage, "--report-json needs --expect GOLDEN");
  }
  // --explain describes without running: every side output asked for is written
  // (--explain-json, --emit-dxdispatch) or, needing a run, refused.
  if (o.explain) {
    const char* needs_run = !o.output.empty()      ? "-o"
                            : o.in_place           ? "--in-place"
                            : !o.expect.empty()    ? "--expect"
                            : o.time               ? "--time"
                            : !o.time_json.empty() ? "--time-json"
                                                   : nullptr;
    if (needs_run)
      throw Error(Errc::usage,
                  fmt::format("{} needs a run, and --explain describes the operation without running it", needs_run));
  }
  for (const NamedInput& in : inputs) check_operand(in.input, o.eval ? in.role.c_str() : in.name.c_str());
  if (!o.emit_dxdispatch.empty()) dxdispatch_files(o);  // refused early
  return prepared;
}

// --expect: compare with the golden file; --update rewrites it instead of failing.
// Standard output carries the result (-o -) or a JSON side output (--time-json -, ...): the
// text report then goes to standard error, so that the reader of standard output gets one
// document and nothing after it.
bool stdout_has_data(const OpOptions& o) {
  return o.output == "-" || o.explain_json == "-" || o.time_json == "-" || o.report_json == "-";
}

// Every file the command names and what it does with it, for check_file_uses(): no two
// outputs, and no output and input, may be one file (--in-place is the one way to write over
// an input), and standard output has one writer.
std::vector<FileUse> file_uses(const OpOptions& o) {
  std::vector<FileUse> uses;
  const auto operand = [&](const std::string& text, const char* name) {
    if (classify_operand(text) == OperandKind::file) uses.push_back({text, name, false, true, false});
  };
  for (const NamedInput& in : named_inputs(o)) operand(in.input, in.role.c_str());
  if (o.in_place) uses.push_back({o.a, "--in-place", true, false, true});
  if (!o.output.empty()) uses.push_back({o.output, "-o", true});
  // Without -o (and without --expect, which then only compares) the result is JSON on
  // standard output; --explain prints the description there instead of running.
  if (o.explain) uses.push_back({"-", "--explain", true});
  else if (o.output.empty() && !o.in_place && o.expect.empty()) uses.push_back({"-", "the result", true});
  if (!o.expect.empty()) uses.push_back({o.expect, o.update ? "--expect (with --update)" : "--expect", o.update});
  if (!o.explain_json.empty()) uses.push_back({o.explain_json, "--explain-json", true});
  if (!o.time_json.empty()) uses.push_back({o.time_json, "--time-json", true});
  if (!o.report_json.empty()) uses.push_back({o.report_json, "--report-json", true});
  if (!o.emit_dxdispatch.empty()) {
    const DxDispatchFiles files = dxdispatch_files(o);
    for (const auto& f : files.inputs) uses.push_back({f, "--emit-dxdispatch", true});
    uses.push_back({files.model, "--emit-dxdispatch", true});
  }
  return uses;
}

void check_expected(const OpOptions& o, const Tensor& result) {
  // --report-json holds every differing element; the text lists --show of them.
  const std::size_t listed = o.report_json.empty() ? o.show : std::numeric_limits<std::size_t>::max();
  const GoldenCheck golden = check_golden(result.view(), o.expect, listed, o.update);
  if (golden.outcome == GoldenCheck::Outcome::updated) {
    std::cerr << fmt::format("dmlbits: {} {}\n", golden.created ? "created" : "updated", o.expect);
    return;
  }
  if (!o.report_json.empty()) write_text_file(o.report_json, compare_report_json(golden.report));
  if (golden.outcome == GoldenCheck::Outcome::matched) {
    if (o.update) std::cerr << fmt::format("dmlbits: {} unchanged\n", o.expect);
    if (o.verbose) std::cerr << "dmlbits: " << compare_text(golden.report, quote_path(o.expect), o.show);
    return;
  }
  (stdout_has_data(o) ? std::cerr : std::cout) << compare_text(golden.report, quote_path(o.expect), o.show);
  throw Error(Errc::mismatch, fmt::format("result differs from {}", quote_path(o.expect)));
}

// Every file the run will write, checked before anything is computed: a bad path for a side
// output must not leave the main output written, nor hide a mismatch behind an I/O error.
void check_output_paths(const OpOptions& o) {
  // Written in place, A would be cut short while it is still being read.
  if (o.in_place && writes_in_place(o.a))
    throw Error(Errc::usage, fmt::format("--in-place needs input A to be a regular file, which is replaced; {} is "
                                         "written in place",
                                         quote_path(o.a)));
  if (!o.output.empty()) check_output_path(o.output);
  if (!o.explain_json.empty()) check_output_path(o.explain_json);
  if (!o.time_json.empty()) check_output_path(o.time_json);
  if (!o.report_json.empty()) check_output_path(o.report_json);
  if (o.update) check_output_path(o.expect);
  if (!o.emit_dxdispatch.empty()) {
    const DxDispatchFiles files = dxdispatch_files(o);
    check_output_path(files.model);
    for (const auto& f : files.inputs) check_output_path(f);
  }
}

// A progress line on a terminal's standard error for runs longer than a second.
class Progress {
 public:
  Progress(bool enabled, std::string label)
      : enabled_(enabled && standard_error_is_terminal()), label_(std::move(label)) {}
  ~Progress() {
    if (shown_) std::cerr << "\r\033[K" << std::flush;
  }
  void operator()(std::uint64_t done, std::uint64_t total) {
    if (!enabled_ || clock_.seconds() < 1.0) return;
    const int pct = total ? static_cast<int>(done * 100 / total) : 100;
    if (pct == last_) return;
    last_ = pct;
    shown_ = true;
    std::cerr << fmt::format("\rdmlbits: {} {:3d}%", label_, pct) << std::flush;
  }

 private:
  bool enabled_;
  std::string label_;
  Stopwatch clock_;
  int last_ = -1;
  bool shown_ = false;
};

void report_validated(const OpOptions& o, const Operation& op, const RunTiming& t, PendingOutputs& side) {
  if (!o.explain_json.empty()) side.add_text(o.explain_json, op.explain_json());
  if (o.verbose) {
    const OperationSummary v = op.summary();
    if (t.selection.rule != SelectionRule::named)
      std::cerr << fmt::format("dmlbits: {}\n", selection_text(t.selection));
    if (t.threads.threads != 0) std::cerr << fmt::format("dmlbits: {}\n", thread_team_text(t.threads));
    const std::string what = v.expression.empty() ? std::string(op_info(v.op).verb) : "'" + v.expression + "'";
    std::cerr << fmt::format("dmlbits: {} runs on the {} backend ({}), {} at {}\n", what, t.backend,
                             device_text(t.device), dtype_info(v.input_dtype).dml_name, v.level.enum_name());
  }
}

void report_timing(const OpOptions& o, const RunResult& r, PendingOutputs& side) {
  if (o.time) {
    const OperationSummary v = r.op.summary();
    const RunDescription what{v.expression.empty() ? std::string(op_info(v.op).verb) : v.expression,
                              v.input_dtype,
                              v.output_shape,
                              v.level,
                              o.warmup,
                              r.execute_samples};
    std::cerr << timing_text(r.timing, what);
  }
  if (!o.time_json.empty()) side.add_text(o.time_json, timing_json(r));
}

// --emit-dxdispatch: the DxDispatch model of the operation with its inputs as read. Called
// before the output is written: in place, the run overwrote A in memory, but A's file still
// holds it until then.
void emit_dxdispatch(const OpOptions& o, const Operation& op, std::span<const TensorView> as_read,
                     PendingOutputs& side) {
  prepare_dxdispatch_model(side, o.emit_dxdispatch, op, std::vector<TensorView>(as_read.begin(), as_read.end()),
                           o.in_place && !o.explain ? o.a : std::string());
}

// What the command line watches while the run works: -v and --explain-json once validated,
// the DxDispatch model before the output is written, the progress line. The side outputs are
// written into `side` as soon as they are known (a full disk fails the run before its result
// is written) and named after the result: a run that fails leaves none of them.
RunHooks run_hooks(const OpOptions& o, Progress& progress, PendingOutputs& side) {
  RunHooks hooks;
  // --emit-dxdispatch needs the inputs, which streaming does not keep.
  if (!o.emit_dxdispatch.empty())
    hooks.before_write = [&o, &side](const Operation& op, std::span<const TensorView> inputs) {
      emit_dxdispatch(o, op, inputs, side);
    };
  hooks.on_validated = [&o, &side](const Operation& v, const RunTiming& t) { report_validated(o, v, t, side); };
  hooks.progress = std::ref(progress);
  return hooks;
}

void run_op(const OpOptions& o) {
  const OpInfo& op = op_info(o.op);
  const PreparedRequest request = make_request(o);
  check_file_uses(file_uses(o));
  set_sync_outputs(o.sync);
  check_output_paths(o);
  if (o.in_place && o.verbose) {
    // The result replaces A as dmlbits writes every .npy: say so when that changes A's layout.
    const TensorFileInfo a = inspect_tensor_file(o.a, std::nullopt, false);
    const bool big = a.byte_order == "big";  // never for one-byte types ("not applicable")
    if (a.fortran_order || big)
      std::cerr << fmt::format(
          "dmlbits: {} is {}; the result is written little-endian in C order\n", quote_path(o.a),
          a.fortran_order ? (big ? "big-endian and in Fortran order" : "in Fortran order") : "big-endian");
  }
  Progress progress(!o.quiet, o.eval ? std::string("eval") : std::string(op.verb));
  PendingOutputs side;
  const RunResult r = run(request, run_hooks(o, progress, side));
  if (o.explain) {
    if (!o.explain_json.empty()) side.add_text(o.explain_json, r.op.explain_json());
    side.commit();
    std::cout << r.op.explain_json();
    return;
  }
  report_timing(o, r, side);
  side.commit();  // the result is written (or there is none, with --expect alone)
  if (!o.expect.empty()) check_expected(o, *r.result);
  if (o.verbose) {
    if (const std::string why = named_temporary_reason(); !why.empty())
      std::cerr << fmt::format("dmlbits: outputs were written under a temporary name, which a kill would leave: {}\n",
                               why);
  }
}

// "A, B, C": the names of the option's table, for its help.
std::string choices_text(OptionKey key) { return fmt::format("{}", fmt::join(option_choices(key), ", ")); }

// The output types popcount offers at some feature level, its default first ("uint8 (default) or uint32").
std::string out_dtype_help(const OpInfo& op) {
  DTypeSet outputs;
  for (const OpTier& tier : op.tiers) outputs = outputs | tier.outputs;
  const DType first = op.default_output_dtype(DType::uint8);
  std::string out = fmt::format("{} (default)", dtype_info(first).numpy_name);
  for (const DTypeInfo& t : dtype_table())
    if (outputs.contains(t.dtype) && t.dtype != first) out += fmt::format(" or {}", t.numpy_name);
  return out;
}

}  // namespace

std::string format_choice(bool json, const std::string& format) {
  if (json && !format.empty() && format != "json")
    throw Error(Errc::usage, fmt::format("--json and --format {} cannot be combined", format));
  return json ? "json" : format;
}

namespace {

// The first operator with output types of its own (popcount), whose --out-dtype eval offers.
const OpInfo* counting_op() {
  for (const OpInfo& op : op_table())
    if (!op.output_dtype_is_input_dtype()) return &op;
  return nullptr;
}

// An operator's command, or with `eval` the expression command (`op` then unused): one set of
// options, those of an operator where an expression has the like (its shifts, its counts).
void setup_op(CommandSetup* sub, const OpInfo& op, bool eval = false) {
  auto opt = std::make_shared<OpOptions>();
  opt->op = op.kind;
  opt->eval = eval;
  const std::string operand_help =
      "a .npy or JSON file, - for standard input, or a literal (5, 0xff, 0b101, [1,2,3]); ./NAME for a file named like "
      "a literal";
  const OpInfo* counts = eval ? counting_op() : &op;
  if (eval) {
    sub->add_option("EXPRESSION", opt->expression,
                    "The expression: operators as in C (& | ^ ~ << >>) or as functions (popcount(x), xor(a, b)), "
                    "names and literals; see EXPRESSIONS in dmlbits(1)")
        ->required();
    sub->add_option("NAME=INPUT", opt->bindings, "Each name of the expression and its input: " + operand_help);
  } else {
    // One string per operand: a JSON array literal contains commas and must stay whole.
    sub->add_option("A", opt->a, (op.arity == 2 ? "First input: " : "Input: ") + operand_help)->required();
    if (op.arity == 2)
      sub->add_option("B", opt->b, "Second input (the shift count for shifts): " + operand_help)->required();
  }
  sub->add_option("-o,--output", opt->output,
                  "Write the result to FILE (- for standard output, as .npy unless --format json); "
                  "without -o the result is printed as JSON")
      ->check(file_name_validator());
  sub->add_option("--format", opt->format, "Output format (default: from the extension)")
      ->check(CLI::IsMember({"npy", "json"}));
  sub->add_flag("--json", opt->json, "Same as --format json");
  if (eval) {
  } else if (op.allows_in_place()) {
    sub->add_flag("--in-place", opt->in_place, "Write the result over input A (atomically)");
  } else  // hidden: refused with DirectML's reason rather than as an unknown option
    sub->add_flag("--in-place", opt->popcount_in_place)->group("");
  sub->add_parsed_option(
         "-l,--feature-level", [opt](const std::string& s) { opt->level = parse_feature_level_option(s); },
         [] {
           return "DirectML feature level: " + choices_text(OptionKey::feature_level) +
                  " (also 4.1, DML_FEATURE_LEVEL_4_1)";
         })
      ->default_str(newest_feature_level().short_name());
  if (op.shift || eval)
    sub->add_parsed_option(
           "--shift-overflow", [opt](const std::string& s) { opt->shift_overflow = parse_shift_overflow_option(s); },
           "Counts >= the element width: directml (what DirectML computes; see the manual), "
           "zero (result 0) or wrap (count modulo width)")
        // Short enough that the description shares the option's line (it names the modes).
        ->option_text("MODE=" + std::string(shift_overflow_name(kDefaultShiftOverflow)));
  if (counts && !counts->output_dtype_is_input_dtype())
    sub->add_parsed_option(
        "--out-dtype", [opt](const std::string& s) { opt->out_dtype = parse_dtype_option(s, OptionKey::out_dtype); },
        [counts, eval] {
          return (eval ? std::string("Output data type of every ") + std::string(counts->verb) +
                             " that names no out_dtype=: "
                       : std::string("Output data type: ")) +
                 out_dtype_help(*counts);
        });
  sub->add_parsed_option(
      "--dtype", [opt](const std::string& s) { opt->dtype = parse_dtype_option(s); },
      "Data type for literals and JSON inputs that name none (default: the other operand's)");
  sub->add_parsed_option(
         "--backend", [opt](const std::string& s) { opt->backend = parse_backend_option(s); },
         [] {
           return fmt::format(
               "Backend: {} (auto: cpu, or from {} of output d3d12 on a hardware adapter "
               "where its estimated time is lower; -v says why)",
               choices_text(OptionKey::backend), format_byte_size(kAutoGpuMinBytes));
         })
      ->default_str(std::string(backend_name(BackendKind::automatic)));
  sub->add_parsed_option(
      "--adapter", [opt](const std::string& s) { opt->adapter = s; },
      [] {
        return adapter_backends_text() + ": run on this adapter, an index or part of its name (see dmlbits devices)";
      });
  sub->add_parsed_option(
      "--isa", [opt](const std::string& s) { opt->isa = parse_isa_option(s); },
      [] {
        return fmt::format(
            "CPU backend: run only this instruction set's kernels ({}) instead of the "
            "per-operation choice",
            choices_text(OptionKey::isa));
      });
  sub->add_parsed_option(
         "--threads", [opt](const std::string& s) { opt->threads = parse_threads_option(s); },
         [] {
           return fmt::format(
               "CPU backends: compute on at most N threads (default: the CPUs this process may "
               "run on, at most {}, for outputs of {} or more, see dmlbits devices; 1 also reads "
               "and writes a streamed run on one thread; default DMLBITS_THREADS)",
               thread_defaults().most, format_byte_size(thread_defaults().parallel_min_bytes));
         })
      ->type_name("N");
  sub->add_flag("--hex", opt->hex, "JSON output: every value as its bit pattern in hex");
  sub->add_flag("--explain", opt->explain, "Print the DirectML operator description as JSON and exit without running");
  sub->add_option("--explain-json", opt->explain_json, "Run, and write the DirectML operator description to FILE")
      ->check(file_name_validator());
  sub->add_option("--expect", opt->expect,
                  "Compare the result bit for bit with GOLDEN (.npy or JSON); exit 1 and report if it differs")
      ->check(file_name_validator());
  sub->add_flag("--update", opt->update, "With --expect: rewrite GOLDEN from the result instead of failing");
  opt->show_option = sub->add_option("--show", opt->show, "With --expect: list at most N differing elements")
                         ->type_name("N")
                         ->check(count_validator())
                         ->capture_default_str();
  sub->add_option("--report-json", opt->report_json, "With --expect: write the full comparison report to FILE")
      ->check(file_name_validator());
  sub->add_option("--emit-dxdispatch", opt->emit_dxdispatch,
                  eval
                      ? "Also write FILE.json, a model for Microsoft's DxDispatch that runs the expression on "
                        "DirectML operator by operator, with each operand NAME as FILE-NAME.npy"
                      : "Also write FILE.json, a model for Microsoft's DxDispatch that runs this operator on DirectML, "
                        "with the inputs as FILE-a.npy[, FILE-b.npy]")
      ->check(file_name_validator());
  sub->add_flag("--time", opt->time, "Print the time of each phase to standard error");
  sub->add_option("--time-json", opt->time_json, "Write timings (phases, samples, statistics) to FILE as JSON")
      ->check(file_name_validator());
  sub->add_option("--repeat", opt->repeat, "Execute N measured times (data already resident)")->capture_default_str();
  sub->add_option("--warmup", opt->warmup, "Execute W unmeasured times first")->capture_default_str();
  sub->add_flag("--sync", opt->sync,
                "Flush every output file and its folder entry to the disk before exiting 0 (fsync), so that "
                "it survives a power cut");
  sub->add_flag("-v,--verbose", opt->verbose, "Say which backend and device run the operator");
  sub->add_flag("-q,--quiet", opt->quiet, "No progress line on a terminal for long runs");
  sub->final_callback([opt] { run_op(*opt); });
}

}  // namespace

Command eval_command() {
  return {"eval",
          {},
          "Compute an expression of the operators in one pass: dmlbits eval 'popcount(a ^ b)' a=x.npy b=y.npy",
          [](CommandSetup* sub) { setup_op(sub, op_table().front(), true); }};
}

Command op_command(const OpInfo& op) {
  return {std::string(op.verb), op.aliases(),
          fmt::format("{} ({}, from {})", op.summary, op.dml_operator_name(), op.introduced().enum_name()),
          [&op](CommandSetup* sub) { setup_op(sub, op); }};
}

}  // namespace dmlbits::app
