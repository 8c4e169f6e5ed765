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

void start_expression_run(const PreparedRequest& p, LoadMode mode, BackendCache* backends, StartedRun& s) {
  const OperationRequest& r = p.request();
  const BoundExpression& bound = *PreparedAccess::expression(p);
  const std::shared_ptr<const expr::Expression>& e = bound.expression;
  RunTiming& t = s.result.timing;

  // The operands, in the order of the expression's names, each read as one operator's are
  // (`mode`: left as streams, borrowed as they lie).
  std::vector<OperandInfo> infos;
  for (std::size_t i = 0; i < e->names.size(); ++i) {
    const std::size_t k = bound.operands[i];
    LoadedOperand in = with_context(operand_context(e->names[i]), [&] {
      return std::move(load_operands(std::vector<Operand>{r.operands[k]}, r.dtype, mode).front());
    });
    infos.push_back({in.dtype(), in.shape()});
    s.inputs.push_back(std::move(in));
  }
  s.clock.lap(t, "read");

  std::map<std::pair<std::int32_t, DType>, Tensor> literals;
  GraphRequest gr;
  gr.expression = e;
  gr.inputs = infos;
  gr.level = p.level();
  gr.dtype = r.dtype;
  gr.out_dtype = r.out_dtype;
  gr.shift_overflow = p.shift_overflow();
  gr.literal_shape = [&](std::int32_t node, DType dtype) {
    auto key = std::make_pair(node, dtype);
    auto it = literals.find(key);
    if (it == literals.end())
      it = literals.emplace(key, read_literal(e->nodes[static_cast<std::size_t>(node)].literal, dtype)).first;
    return it->second.shape();
  };

  // From the face's BackendCache where it keeps one (the Python module): auto's choice of a
  // backend, which looks for a hardware adapter from kAutoGpuMinBytes, is then made once.
  s.backend = &operation_backend(p, s.inputs, backends, s.owned, s.cached);
  s.clock.lap(t, "backend");
  auto graph = std::make_shared<const ValidatedGraph>(validate_graph(gr));
  if (auto why = s.backend->unsupported_graph_reason(*graph))
    throw Error(Errc::unsupported,
                fmt::format("the {} backend cannot run this expression: {}", s.backend->name(), *why));
  for (const GraphConstant& c : graph->constants()) {
    const Tensor& literal = literals.at({c.expr_node, c.dtype});
    Tensor& copy = s.constants.emplace_back(literal.dtype(), literal.shape());
    std::memcpy(copy.data(), literal.data(), literal.byte_size());
  }
  s.result.op = OperationAccess::make(graph);
  s.graph = std::move(graph);
  s.clock.lap(t, "validate");
}

}  // namespace dmlbits
