#include "graph.hpp"

#include <map>
#include <utility>

#include <fmt/format.h>

#include "backend.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

using expr::NodeKind;

class GraphBuilder {
 public:
  explicit GraphBuilder(const GraphRequest& request)
      : r_(request), e_(*request.expression), natural_(e_.nodes.size()), known_(e_.nodes.size()) {}

  GraphValue build(std::int32_t i, std::optional<DType> expected);
  std::vector<GraphConstant>& constants() { return constants_; }
  std::vector<GraphNode>& nodes() { return nodes_; }

 private:
  const expr::Node& node(std::int32_t i) const { return e_.nodes[static_cast<std::size_t>(i)]; }
  std::optional<DType> natural(std::int32_t i);
  [[noreturn]] void refuse(std::int32_t i, Errc code, std::string_view problem) const {
    throw Error(code, expr::caret_message(e_.text, node(i).span, problem));
  }
  std::uint32_t input_index(std::int32_t i) const;

  const GraphRequest& r_;
  const expr::Expression& e_;
  // The dtype a node has whatever its context: an operand's, an operator's over such operands,
  // popcount's output; nullopt where only the context decides (a literal, ~ of a literal).
  std::vector<std::optional<DType>> natural_;
  std::vector<bool> known_;
  std::map<std::pair<std::int32_t, int>, GraphValue> built_;  // (expression node, dtype) -> value
  std::vector<GraphConstant> constants_;
  std::vector<GraphNode> nodes_;
};

std::uint32_t GraphBuilder::input_index(std::int32_t i) const {
  for (std::size_t k = 0; k < e_.names.size(); ++k)
    if (e_.names[k] == node(i).name) return static_cast<std::uint32_t>(k);
  throw Error(Errc::internal, fmt::format("expression name '{}' missing from its names", node(i).name));
}

std::optional<DType> GraphBuilder::natural(std::int32_t i) {
  const auto k = static_cast<std::size_t>(i);
  if (known_[k]) return natural_[k];
  const expr::Node& n = node(i);
  std::optional<DType> d;
  switch (n.kind) {
    case NodeKind::name:
      d = r_.inputs[input_index(i)].dtype;
      break;
    case NodeKind::literal:
      break;
    case NodeKind::op: {
      const OpInfo& op = op_info(n.op);
      if (op.output_dtype_is_input_dtype()) {
        for (int a = 0; a < op.arity && !d; ++a) d = natural(n.args[static_cast<std::size_t>(a)]);
      } else {
        const std::optional<DType> in = natural(n.args[0]);
        d = n.out_dtype ? n.out_dtype : r_.out_dtype;
        if (!d) d = op.default_output_dtype(in.value_or(r_.dtype.value_or(DType::uint8)));
      }
      break;
    }
  }
  known_[k] = true;
  natural_[k] = d;
  return d;
}

GraphValue GraphBuilder::build(std::int32_t i, std::optional<DType> expected) {
  const expr::Node& n = node(i);
  if (n.kind == NodeKind::name) return {GraphValue::Kind::input, input_index(i)};

  // The dtype this node computes in: its own where it has one, else its context's, else --dtype.
  std::optional<DType> d = natural(i);
  if (!d) d = expected;
  if (!d) d = r_.dtype;
  if (!d)
    refuse(
        i, Errc::invalid_input,
        n.kind == NodeKind::literal
            ? fmt::format("nothing gives the literal '{}' a data type: no operand meets it, and no dtype was given",
                          n.literal)
            : std::string("nothing gives this subexpression a data type: it has no operand, and no dtype was given"));

  const auto key = std::make_pair(i, static_cast<int>(*d));
  if (auto it = built_.find(key); it != built_.end()) return it->second;

  GraphValue v;
  if (n.kind == NodeKind::literal) {
    Shape shape;
    try {
      shape = r_.literal_shape(i, *d);
    } catch (const Error& err) {
      refuse(i, err.code(), err.what());
    }
    v = {GraphValue::Kind::constant, static_cast<std::uint32_t>(constants_.size())};
    constants_.push_back({i, *d, shape});
  } else {
    const OpInfo& op = op_info(n.op);
    OpRequest req;
    req.op = n.op;
    req.level = r_.level;
    req.shift_overflow = r_.shift_overflow;
    std::array<GraphValue, 2> args{};
    if (op.output_dtype_is_input_dtype()) {
      for (int a = 0; a < op.arity; ++a)
        args[static_cast<std::size_t>(a)] = build(n.args[static_cast<std::size_t>(a)], d);
    } else {
      // An operator with output types of its own (popcount): its input's dtype comes from
      // below, or from --dtype, never from the output's context.
      req.out_dtype = n.out_dtype ? n.out_dtype : r_.out_dtype;
      args[0] = build(n.args[0], std::nullopt);
    }
    for (int a = 0; a < op.arity; ++a) {
      const GraphValue& arg = args[static_cast<std::size_t>(a)];
      req.inputs.push_back(arg.kind == GraphValue::Kind::input ? r_.inputs[arg.index]
                           : arg.kind == GraphValue::Kind::constant
                               ? OperandInfo{constants_[arg.index].dtype, constants_[arg.index].shape}
                               : OperandInfo{nodes_[arg.index].op.output_dtype(), nodes_[arg.index].op.output_shape()});
    }
    std::optional<ValidatedOp> op_v;
    try {
      op_v.emplace(validate(req));
    } catch (const Error& err) {
      refuse(i, err.code(), err.what());
    }
    if (nodes_.size() >= 2 * expr::kMaxExpressionNodes)
      refuse(i, Errc::invalid_input,
             fmt::format("the expression needs more than {} nodes at its data types", 2 * expr::kMaxExpressionNodes));
    v = {GraphValue::Kind::node, static_cast<std::uint32_t>(nodes_.size())};
    nodes_.push_back({std::move(*op_v), args, i});
  }
  built_.emplace(key, v);
  return v;
}

}  // namespace

OperandInfo ValidatedGraph::value_info(const GraphValue& v) const {
  switch (v.kind) {
    case GraphValue::Kind::input:
      return inputs_[v.index];
    case GraphValue::Kind::constant:
      return {constants_[v.index].dtype, constants_[v.index].shape};
    case GraphValue::Kind::node:
      break;
  }
  const ValidatedOp& op = nodes_[v.index].op;
  return {op.output_dtype(), op.output_shape()};
}

bool ValidatedGraph::is_flat_streamable() const {
  const Shape& out = output_shape();
  const auto fits = [&](const Shape& s) { return s == out || s.element_count() == 1; };
  for (const OperandInfo& in : inputs_)
    if (!fits(in.shape)) return false;
  for (const GraphConstant& c : constants_)
    if (!fits(c.shape)) return false;
  for (const GraphNode& n : nodes_)
    if (!fits(n.op.output_shape())) return false;
  return true;
}

ValidatedGraph ValidatedGraph::flat_chunk(std::uint64_t count) const {
  if (!is_flat_streamable()) throw Error(Errc::internal, "flat_chunk of a graph that broadcasts along an axis");
  const Shape& out = output_shape();
  const auto chunk_shape = [&](const Shape& s) { return s == out ? Shape{count} : Shape{1}; };
  ValidatedGraph g = *this;
  for (OperandInfo& in : g.inputs_) in.shape = chunk_shape(in.shape);
  for (GraphConstant& c : g.constants_) c.shape = chunk_shape(c.shape);
  // A node of one element (over one-element operands only) stays one; the others take `count`.
  for (GraphNode& n : g.nodes_)
    if (n.op.output_shape() == out) n.op = n.op.flat_chunk(count);
  return g;
}

bool ValidatedGraph::is_single_operator() const {
  if (nodes_.size() != 1 || !constants_.empty()) return false;
  const GraphNode& n = nodes_.front();
  if (inputs_.size() != static_cast<std::size_t>(n.op.op().arity)) return false;
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    if (n.args[i].kind != GraphValue::Kind::input || n.args[i].index != i) return false;
  return true;
}

std::uint64_t ValidatedGraph::input_bytes() const {
  std::uint64_t bytes = 0;
  for (const OperandInfo& in : inputs_) bytes += in.shape.element_count() * dtype_info(in.dtype).size;
  return bytes;
}

std::uint64_t ValidatedGraph::output_bytes() const {
  return output_shape().element_count() * dtype_info(output_dtype()).size;
}

ValidatedGraph validate_graph(const GraphRequest& r) {
  if (!r.expression) throw Error(Errc::internal, "validate_graph without an expression");
  const expr::Expression& e = *r.expression;
  if (r.inputs.size() != e.names.size())
    throw Error(Errc::usage, fmt::format("the expression has {} operand name{}, {} given", e.names.size(),
                                         e.names.size() == 1 ? "" : "s", r.inputs.size()));
  const expr::Node& root = e.nodes.at(static_cast<std::size_t>(e.root));
  if (root.kind != expr::NodeKind::op)
    throw Error(Errc::usage, expr::caret_message(e.text, root.span,
                                                 "the expression computes nothing: it is an operand, not an operator"));

  ValidatedGraph g;
  g.expression_ = r.expression;
  g.inputs_ = r.inputs;
  g.level_ = r.level;
  GraphBuilder builder(r);
  builder.build(e.root, std::nullopt);
  g.constants_ = std::move(builder.constants());
  g.nodes_ = std::move(builder.nodes());
  return g;
}

ValidatedGraph single_node_graph(ValidatedOp op) {
  const OpInfo& info = op.op();
  auto e = std::make_shared<expr::Expression>();
  const char* names[] = {"a", "b"};
  e->text = info.arity == 2 ? fmt::format("{}(a, b)", info.verb) : fmt::format("{}(a)", info.verb);
  expr::Node call;
  call.kind = expr::NodeKind::op;
  call.op = info.kind;
  call.span = {0, static_cast<std::uint32_t>(e->text.size())};
  if (!info.output_dtype_is_input_dtype()) call.out_dtype = op.output_dtype();
  ValidatedGraph g;
  GraphNode node{std::move(op), {}, info.arity};
  for (int i = 0; i < info.arity; ++i) {
    expr::Node n;
    n.kind = expr::NodeKind::name;
    n.name = names[i];
    n.span = {static_cast<std::uint32_t>(info.verb.size() + 1 + 3 * i), 1};
    e->nodes.push_back(n);
    e->names.emplace_back(names[i]);
    call.args[static_cast<std::size_t>(i)] = i;
    node.args[static_cast<std::size_t>(i)] = {GraphValue::Kind::input, static_cast<std::uint32_t>(i)};
    g.inputs_.push_back({node.op.input_dtype(), node.op.input_shapes()[static_cast<std::size_t>(i)]});
  }
  e->nodes.push_back(call);
  e->root = info.arity;
  g.expression_ = std::move(e);
  g.level_ = node.op.level();
  g.nodes_.push_back(std::move(node));
  return g;
}

void run_graph_nodes(const ValidatedGraph& graph, Backend& backend, std::span<const std::span<const std::byte>> inputs,
                     std::span<const std::span<const std::byte>> constants, std::span<std::byte> output) {
  const auto nodes = graph.nodes();
  std::vector<std::vector<std::byte>> temporaries(nodes.size());
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const GraphNode& n = nodes[k];
    ExecuteBuffers buffers;
    for (int a = 0; a < n.op.op().arity; ++a) {
      const GraphValue& v = n.args[static_cast<std::size_t>(a)];
      buffers.inputs.push_back(v.kind == GraphValue::Kind::input ? inputs[v.index]
                               : v.kind == GraphValue::Kind::constant
                                   ? constants[v.index]
                                   : std::span<const std::byte>(temporaries[v.index]));
    }
    if (k + 1 == nodes.size()) {
      buffers.output = output;
    } else {
      temporaries[k].resize(n.op.output_shape().element_count() * dtype_info(n.op.output_dtype()).size);
      buffers.output = temporaries[k];
    }
    if (!n.op.desc().empty) backend.run(n.op, buffers);
  }
}

}  // namespace dmlbits
