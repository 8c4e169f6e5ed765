// Expressions (issue #46) in the run layer: prepare_request() binds an expression's names to the
// request's operands (bind_expression), and start_run() starts a prepared expression's run
// (start_expression_run): its operands read, its graph validated node by node. From there it
// runs as a single operator does, which runs as a graph of one node: in memory or streamed, on
// the backend's run_graph (fused where the backend fuses).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "dmlbits/request.hpp"
#include "expression.hpp"
#include "graph.hpp"
#include "operand.hpp"

namespace dmlbits {

struct StartedRun;  // run.hpp

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

// start_run's steps for an expression (run.hpp): its operands read (`mode`, as an operator's) in
// the order of its names, each named in messages ("operand 'a'"); the backend made, or taken
// from `backends`; the graph validated node by node, its literals read (run.constants);
// Errc::unsupported when the backend cannot run the graph. Laps "read", "backend", "validate".
void start_expression_run(const PreparedRequest& p, LoadMode mode, BackendCache* backends, StartedRun& run);

// A literal of the expression read as `dtype`, as start_expression_run() reads it: the value of
// a constant of the graph. Throws Error as load_operands() for a text that is no such value.
Tensor read_expression_literal(const std::string& text, DType dtype);

// The graph as --explain prints it: its expression, its nodes (each its DirectML operator
// description and where its operands come from), its inputs and constants. Indented by 2, with
// a final newline.
std::string graph_explain_json(const ValidatedGraph& graph);

}  // namespace dmlbits
