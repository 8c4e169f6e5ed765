// A graph of the bitwise operators (issue #46), validated as DirectML validates a DML_GRAPH_DESC:
// every node is one operator validated by validate() at the graph's feature level, so each node
// obeys what that operator obeys alone (both operands of a binary node of one dtype, the level's
// types and dimension counts, broadcasting as stride-0 descriptors). An expression's literals
// take the dtype of the node they meet; a subexpression used at two dtypes is two nodes.
//
// The result of a graph is, by definition, what its nodes give when run one by one in order
// (run_graph_nodes() on the reference backend): the executable specification that fused
// executors are tested against.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "expression.hpp"
#include "validate.hpp"

namespace dmlbits {

class Backend;  // backend.hpp, which includes this header

// Where an operand of a node comes from.
struct GraphValue {
  enum class Kind : std::uint8_t { input, constant, node };
  Kind kind = Kind::input;
  std::uint32_t index = 0;  // input: the graph's inputs; constant: its constants; node: an earlier node
};

// A literal of the expression read at one dtype.
struct GraphConstant {
  std::int32_t expr_node = -1;  // the literal node in the expression
  DType dtype{};
  Shape shape;
};

struct GraphNode {
  ValidatedOp op;
  std::array<GraphValue, 2> args{};  // op().arity of them
  std::int32_t expr_node = -1;       // the operator node in the expression, for messages and --explain
};

struct GraphRequest {
  std::shared_ptr<const expr::Expression> expression;
  // One per expression->names, in that order: each operand's dtype and shape as read.
  std::vector<OperandInfo> inputs;
  // The shape literal `expr_node` has when read as `dtype` (a list's nesting: one element for a
  // number). Throws Error when the text is no value of that dtype; validate_graph() adds the
  // literal's place in the expression. The face reads the literal the same way later.
  std::function<Shape(std::int32_t expr_node, DType dtype)> literal_shape;
  FeatureLevel level = newest_feature_level();
  std::optional<DType> dtype;      // literals that no operand of their node gives a dtype (--dtype)
  std::optional<DType> out_dtype;  // popcount nodes without out_dtype= (--out-dtype)
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
};

class ValidatedGraph {
 public:
  const expr::Expression& expression() const { return *expression_; }
  std::span<const GraphNode> nodes() const { return nodes_; }
  std::span<const GraphConstant> constants() const { return constants_; }
  std::span<const OperandInfo> inputs() const { return inputs_; }
  const GraphNode& output_node() const { return nodes_.back(); }
  FeatureLevel level() const { return level_; }
  DType output_dtype() const { return output_node().op.output_dtype(); }
  const Shape& output_shape() const { return output_node().op.output_shape(); }
  // The shape and dtype of a node's operand.
  OperandInfo value_info(const GraphValue& v) const;

  // Whether every input, constant and node has the output's shape or one element, so that any
  // flat range of the output is computed from the same range of each (or its one element): the
  // condition of a fused, tiled pass.
  bool is_flat_streamable() const;
  // This graph restricted to `count` consecutive output elements, as a 1-D graph: inputs,
  // constants and nodes of the output's shape become runs of `count`, one-element ones stay one
  // element (each node's ValidatedOp::flat_chunk). Needs is_flat_streamable().
  ValidatedGraph flat_chunk(std::uint64_t count) const;
  // Whether it is one operator over the graph's inputs in order, single_node_graph's form (not
  // `a & a`, nor `a & 3`): the operator's operands are the graph's inputs, one for one.
  bool is_single_operator() const;
  // The bytes of the inputs (as read: broadcast ones once) and of the output.
  std::uint64_t input_bytes() const;
  std::uint64_t output_bytes() const;

 private:
  friend ValidatedGraph validate_graph(const GraphRequest& request);
  friend ValidatedGraph single_node_graph(ValidatedOp op);
  std::shared_ptr<const expr::Expression> expression_;
  std::vector<OperandInfo> inputs_;
  std::vector<GraphConstant> constants_;
  std::vector<GraphNode> nodes_;  // topological; the last is the result
  FeatureLevel level_;
};

// Throws Error: Errc::usage for an expression that computes nothing (its root is an operand or a
// literal) or an input count other than the expression's names; a literal whose dtype nothing
// fixes (and no request dtype), or a node validate() refuses (Errc::invalid_input, its message
// under the node's text with a caret: expr::caret_message).
ValidatedGraph validate_graph(const GraphRequest& request);

// One validated operator as a graph of one node over inputs "a" (and "b"): a single operator is
// run as a graph like any other.
ValidatedGraph single_node_graph(ValidatedOp op);

// Runs the graph node by node on `backend`, each node over whole tensors into a full-size
// temporary: inputs[i] and constants[i] packed in their own shapes (as a ValidatedOp's inputs),
// the output packed in the output's shape.
void run_graph_nodes(const ValidatedGraph& graph, Backend& backend, std::span<const std::span<const std::byte>> inputs,
                     std::span<const std::span<const std::byte>> constants, std::span<std::byte> output);

}  // namespace dmlbits
