// Expressions (issue #46) in the run layer: prepare_request() binds an expression's names to the
// request's operands (bind_expression), and run() runs a prepared expression (run_expression):
// its operands read, its graph validated node by node, run on the backend's run_graph (fused
// where the backend fuses), the result written as one operator's is.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dmlbits/request.hpp"
#include "expression.hpp"
#include "graph.hpp"

namespace dmlbits {

struct BoundExpression {
  // The expression with its names bound to literal operands made literals.
  std::shared_ptr<const expr::Expression> expression;
  std::vector<std::size_t> operands;  // per expression->names: the index of its operand
};

struct PreparedAccess {
  static const BoundExpression* expression(const PreparedRequest& p) {
    return static_cast<const BoundExpression*>(p.expression_.get());
  }
  static void set_expression(PreparedRequest& p, BoundExpression e) {
    p.expression_ = std::make_shared<const BoundExpression>(std::move(e));
  }
};

// Parses r.expression and binds r.names to r.operands. Throws Error(Errc::usage): the parser's
// refusals (a caret under the column), a name bound twice or to nothing in the expression, a
// name of the expression left unbound, names and operands of different counts.
BoundExpression bind_expression(const OperationRequest& r);

// A literal of the expression read as `dtype`, as run_expression() reads it: the value of a
// constant of the graph. Throws Error as load_operands() for a text that is no such value.
Tensor read_expression_literal(const std::string& text, DType dtype);

// `backends`, when given, supplies (and keeps) the backend, as for one operator's in-memory run.
RunResult run_expression(const PreparedRequest& p, const RunHooks& hooks, BackendCache* backends);

// The graph as --explain prints it: its expression, its nodes (each its DirectML operator
// description and where its operands come from), its inputs and constants. Indented by 2, with
// a final newline.
std::string graph_explain_json(const ValidatedGraph& graph);

}  // namespace dmlbits
