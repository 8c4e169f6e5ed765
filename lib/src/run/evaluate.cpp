// An expression's run (issue #46): its operands read, the graph validated, run on the backend
// (run_graph: fused where the backend fuses), the result written as a single operator's is.
#include "evaluate.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "cpu_backend.hpp"
#include "d3d12_backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "io.hpp"
#include "json_tensor.hpp"
#include "make_backend.hpp"
#include "operation_access.hpp"
#include "operation_output.hpp"
#include "operand.hpp"
#include "run.hpp"
#include "dml_desc.hpp"

#include <nlohmann/json.hpp>

namespace dmlbits {
namespace {

// A literal of the expression as the command line's operand reader takes it: integers and
// lists as they are; a bare float (1.5, 1e3, inf, nan, nan(0x7f)), which an operand must write
// as a list, read as JSON, a 0-d tensor.
Tensor read_literal(const std::string& text, DType dtype) {
  const OperandKind kind = classify_operand(text);
  if (kind == OperandKind::scalar_literal || kind == OperandKind::array_literal)
    return std::move(load_operands({Operand(text)}, dtype).front().tensor);
  std::string json = text;
  bool word = false;  // inf, infinity, nan, nan(...): JSON strings
  for (char c : text) word = word || std::isalpha(static_cast<unsigned char>(c)) != 0;
  const bool exponent_only =
      text.find_first_of("eE") != std::string::npos && text.find_first_not_of("0123456789eE+-.") == std::string::npos;
  if (word && !exponent_only) json = fmt::format("\"{}\"", text);
  JsonReadOptions options;
  options.default_dtype = dtype;
  return read_json_tensor(json, options);
}

// What the face words: "operand 'a'" in the run's messages.
std::string operand_context(const std::string& name) { return fmt::format("operand '{}'", name); }

bool is_literal_text(const Operand& operand) {
  const auto* text = std::get_if<std::string>(&operand);
  if (!text) return false;
  const OperandKind kind = classify_operand(*text);
  return kind == OperandKind::scalar_literal || kind == OperandKind::array_literal;
}

}  // namespace

namespace {

// One execution of the graph; with a between_chunks hook, a flat graph in chunks of about
// kInMemoryChunkBytes (read and written), the hook called between them, as one operator's
// in-memory run does, so that a face sees an interruption promptly.
void execute_graph(Backend& backend, const ValidatedGraph& graph, const GraphBuffers& buffers,
                   const std::function<void()>& between_chunks) {
  const std::uint64_t n = graph.output_shape().element_count();
  if (!between_chunks || n == 0 || !graph.is_flat_streamable()) {
    backend.run_graph(graph, buffers);
    return;
  }
  const std::uint64_t element_bytes = (graph.input_bytes() + graph.output_bytes()) / n + 1;
  const std::uint64_t count = std::max<std::uint64_t>(1, kInMemoryChunkBytes / element_bytes) / 64 * 64 + 64;
  if (n <= count) {
    backend.run_graph(graph, buffers);
    return;
  }
  const Shape& out_shape = graph.output_shape();
  const std::size_t out_size = dtype_info(graph.output_dtype()).size;
  for (std::uint64_t first = 0; first < n; first += count) {
    if (first > 0) between_chunks();
    const std::uint64_t m = std::min(count, n - first);
    const ValidatedGraph chunk = graph.flat_chunk(m);
    GraphBuffers part;
    // A full-length operand is read from `first`; a one-element one is the same element.
    const auto slice = [&](std::span<const std::byte> bytes, const Shape& shape, DType dtype) {
      const std::size_t size = dtype_info(dtype).size;
      return shape == out_shape ? bytes.subspan(first * size, m * size) : bytes;
    };
    for (std::size_t i = 0; i < graph.inputs().size(); ++i)
      part.inputs.push_back(slice(buffers.inputs[i], graph.inputs()[i].shape, graph.inputs()[i].dtype));
    for (std::size_t i = 0; i < graph.constants().size(); ++i)
      part.constants.push_back(slice(buffers.constants[i], graph.constants()[i].shape, graph.constants()[i].dtype));
    part.output = buffers.output.subspan(first * out_size, m * out_size);
    backend.run_graph(chunk, part);
  }
}

}  // namespace

BoundExpression bind_expression(const OperationRequest& r) {
  if (r.names.size() != r.operands.size())
    throw Error(Errc::usage, fmt::format("an expression's operands need a name each: {} names for {} operands",
                                         r.names.size(), r.operands.size()));
  expr::Expression e = expr::parse_expression(r.expression);
  for (std::size_t i = 0; i < r.names.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j)
      if (r.names[j] == r.names[i]) throw Error(Errc::usage, fmt::format("operand '{}' is bound twice", r.names[i]));
    if (std::find(e.names.begin(), e.names.end(), r.names[i]) == e.names.end())
      throw Error(Errc::usage,
                  fmt::format("operand '{}' is bound but the expression does not use it (its names: {})", r.names[i],
                              e.names.empty() ? std::string("none") : fmt::format("{}", fmt::join(e.names, ", "))));
  }
  BoundExpression bound;
  std::vector<std::string> names;
  for (const std::string& name : e.names) {
    const auto at = std::find(r.names.begin(), r.names.end(), name);
    if (at == r.names.end()) {
      std::int32_t node = 0;
      while (e.nodes[static_cast<std::size_t>(node)].kind != expr::NodeKind::name ||
             e.nodes[static_cast<std::size_t>(node)].name != name)
        ++node;
      throw Error(Errc::usage, expr::caret_message(e.text, e.nodes[static_cast<std::size_t>(node)].span,
                                                   fmt::format("the name '{}' is not bound to an operand", name)));
    }
    const auto k = static_cast<std::size_t>(at - r.names.begin());
    if (is_literal_text(r.operands[k])) {
      // A name bound to a literal is that literal in the expression.
      for (expr::Node& n : e.nodes)
        if (n.kind == expr::NodeKind::name && n.name == name) {
          n.kind = expr::NodeKind::literal;
          n.literal = std::get<std::string>(r.operands[k]);
          n.name.clear();
        }
      continue;
    }
    names.push_back(name);
    bound.operands.push_back(k);
  }
  // Standard input is read once: by one operand at most (load_operands' rule for an operator).
  std::size_t from_stdin = 0;
  for (const std::size_t k : bound.operands) {
    const auto* text = std::get_if<std::string>(&r.operands[k]);
    if (text && classify_operand(*text) == OperandKind::standard_input) ++from_stdin;
  }
  if (from_stdin > 1) throw Error(Errc::usage, "standard input ('-') can be given as one operand only");
  e.names = std::move(names);
  bound.expression = std::make_shared<const expr::Expression>(std::move(e));
  return bound;
}

Tensor read_expression_literal(const std::string& text, DType dtype) { return read_literal(text, dtype); }

std::vector<std::uint64_t> dims_of(const Shape& s) { return {s.dims().begin(), s.dims().end()}; }

std::string graph_explain_json(const ValidatedGraph& g) {
  const expr::Expression& e = g.expression();
  nlohmann::json j;
  j["expression"] = e.text;
  j["feature_level"] = g.level().enum_name();
  nlohmann::json inputs = nlohmann::json::array();
  for (std::size_t i = 0; i < g.inputs().size(); ++i)
    inputs.push_back({{"name", e.names[i]},
                      {"dtype", dtype_info(g.inputs()[i].dtype).dml_name},
                      {"shape", dims_of(g.inputs()[i].shape)}});
  j["inputs"] = inputs;
  nlohmann::json constants = nlohmann::json::array();
  for (const GraphConstant& c : g.constants())
    constants.push_back({{"literal", e.nodes[static_cast<std::size_t>(c.expr_node)].literal},
                         {"dtype", dtype_info(c.dtype).dml_name},
                         {"shape", dims_of(c.shape)}});
  j["constants"] = constants;
  nlohmann::json nodes = nlohmann::json::array();
  for (const GraphNode& n : g.nodes()) {
    nlohmann::json from = nlohmann::json::array();
    for (int a = 0; a < n.op.op().arity; ++a) {
      const GraphValue& v = n.args[static_cast<std::size_t>(a)];
      const char* kind = v.kind == GraphValue::Kind::input      ? "input"
                         : v.kind == GraphValue::Kind::constant ? "constant"
                                                                : "node";
      from.push_back({{kind, v.index}});
    }
    nodes.push_back({{"text", std::string(e.node_text(n.expr_node))},
                     {"column", e.column(n.expr_node)},
                     {"inputs", from},
                     {"operator", to_json(n.op.desc())}});
  }
  j["nodes"] = nodes;
  // How each backend runs it: in one pass, or node by node (each node a full-size temporary).
  const auto passes = [](const std::optional<std::string>& refusal) {
    return refusal ? "node by node: " + *refusal : std::string("one pass");
  };
  j["backends"] = {
      {"cpu", passes(CpuBackend::fuses(g)
                         ? std::nullopt
                         : std::optional<std::string>(g.nodes().size() < 2
                                                          ? "one node: the operator's own kernel"
                                                          : "an operand broadcast along an axis (not flat)"))},
      {"cpu-reference", "node by node: the specification"},
      {"d3d12", passes(D3d12Backend::graph_fusion_refusal(g))},
      {"directml", g.nodes().size() < 2 ? std::string("the operator itself")
                                        : std::string("one pass: a DML_GRAPH_DESC compiled by CompileGraph")}};
  j["output"] = {{"node", g.nodes().size() - 1},
                 {"dtype", dtype_info(g.output_dtype()).dml_name},
                 {"shape", dims_of(g.output_shape())}};
  return j.dump(2) + "\n";
}

RunResult run_expression(const PreparedRequest& p, const RunHooks& hooks, BackendCache* backends) {
  const OperationRequest& r = p.request();
  const BoundExpression& bound = *PreparedAccess::expression(p);
  const std::shared_ptr<const expr::Expression>& e = bound.expression;
  const bool timed = run_is_timed(p, hooks);
  PhaseClock clock(timed);
  RunResult result;
  RunTiming& t = result.timing;

  // The operands, in the order of the expression's names.
  std::vector<LoadedOperand> inputs;
  std::vector<OperandInfo> infos;
  for (std::size_t i = 0; i < e->names.size(); ++i) {
    const std::size_t k = bound.operands[i];
    LoadedOperand in = with_context(operand_context(e->names[i]), [&] {
      return std::move(load_operands(std::vector<Operand>{r.operands[k]}, r.dtype).front());
    });
    in.materialize();
    infos.push_back({in.dtype(), in.shape()});
    inputs.push_back(std::move(in));
  }
  clock.lap(t, "read");

  std::map<std::pair<std::int32_t, DType>, Tensor> literals;
  GraphRequest gr;
  gr.expression = e;
  gr.inputs = infos;
  gr.level = p.level();
  gr.dtype = r.dtype;
  gr.out_dtype = r.out_dtype;
  gr.shift_overflow = r.shift_overflow.value_or(kDefaultShiftOverflow);
  gr.literal_shape = [&](std::int32_t node, DType dtype) {
    auto key = std::make_pair(node, dtype);
    auto it = literals.find(key);
    if (it == literals.end())
      it = literals.emplace(key, read_literal(e->nodes[static_cast<std::size_t>(node)].literal, dtype)).first;
    return it->second.shape();
  };

  // From the face's BackendCache where it keeps one (the Python module): auto's choice of a
  // backend, which looks for a hardware adapter from kAutoGpuMinBytes, is then made once.
  std::unique_ptr<Backend> owned;
  CachedBackends::Entry* entry = nullptr;
  Backend* const backend = &operation_backend(p, inputs, backends, owned, entry);
  clock.lap(t, "backend");
  auto graph = std::make_shared<const ValidatedGraph>(validate_graph(gr));
  if (auto why = backend->unsupported_graph_reason(*graph))
    throw Error(Errc::unsupported, fmt::format("the {} backend cannot run this expression: {}", backend->name(), *why));
  clock.lap(t, "validate");
  if (timed) {
    t.backend = std::string(backend->name());
    t.selection = backend->selection();
    t.threads = backend->thread_team();
    t.device = backend->device_description();
  }
  result.op = OperationAccess::make(graph);
  const auto before_write = [&] {  // the inputs as read, as for one operator (--emit-dxdispatch)
    std::vector<TensorView> views;
    for (const LoadedOperand& in : inputs) views.push_back(in.view());
    if (hooks.before_write) hooks.before_write(result.op, views);
  };
  if (r.explain_only) {
    before_write();
    return result;
  }
  if (hooks.on_validated) hooks.on_validated(result.op, t);

  GraphBuffers buffers;
  for (const LoadedOperand& in : inputs) buffers.inputs.push_back(in.view().bytes());
  for (const GraphConstant& c : graph->constants())
    buffers.constants.push_back(literals.at({c.expr_node, c.dtype}).view().bytes());
  Tensor output;
  const MutableTensorView out = result_memory(r, hooks, graph->output_dtype(), graph->output_shape(), output);
  buffers.output = {out.data, out.byte_size()};
  clock.lap(t, "allocate");
  for (int i = 0; i < r.warmup; ++i) {
    execute_graph(*backend, *graph, buffers, hooks.between_chunks);
    if (hooks.between_chunks) hooks.between_chunks();
  }
  if (r.warmup > 0) clock.lap(t, "warmup");
  result.warmup = r.warmup;
  for (int i = 0; i < r.repeat; ++i) {
    if (clock.on()) {
      Stopwatch one;
      execute_graph(*backend, *graph, buffers, hooks.between_chunks);
      result.execute_samples.push_back(one.seconds());
    } else {
      execute_graph(*backend, *graph, buffers, hooks.between_chunks);
    }
    if (hooks.between_chunks && i + 1 < r.repeat) hooks.between_chunks();
  }
  clock.lap(t, "execute");
  t.execute_runs = r.repeat;
  t.execute_bytes = out.byte_size() + graph->input_bytes();
  if (clock.on()) t.backend_phases = backend->detail_phases();

  before_write();
  const bool file = r.output == OutputKind::file || (r.output == OutputKind::automatic);
  if (file) {
    const OutputTarget to = output_target(r);
    write_tensor(out, to.path, to.format, to.json);
  }
  if (r.keep_result || (r.output == OutputKind::memory && !hooks.allocate_result)) {
    if (output.byte_size() == out.byte_size() && output.data() == out.data) {
      result.result = std::move(output);
    } else {
      result.result = Tensor(out.dtype, out.shape);
      std::memcpy(result.result->data(), out.data, out.byte_size());
    }
  }
  clock.lap(t, "write");
  t.total_seconds = clock.total_seconds();
  return result;
}

}  // namespace dmlbits
