// The library's side of the public handles (dmlbits/request.hpp): an Operation's validated
// operation and a BackendCache's backends, which the public types hold opaquely so that no
// internal type shows in a public signature.
#pragma once

#include <memory>

#include "dmlbits/plan.hpp"
#include "dmlbits/request.hpp"
#include "graph.hpp"
#include "run_types.hpp"
#include "validate.hpp"

namespace dmlbits {

// What an Operation holds: one validated operator, or a graph (an expression) and its last node.
struct OperationState {
  std::shared_ptr<const ValidatedOp> op;        // the operator; for a graph, its output node's
  std::shared_ptr<const ValidatedGraph> graph;  // an expression's graph, or null
};

struct OperationAccess {
  static Operation make(std::shared_ptr<const ValidatedOp> op) {
    Operation o;
    o.impl_ = std::make_shared<const OperationState>(OperationState{std::move(op), nullptr});
    return o;
  }
  static Operation make(std::shared_ptr<const ValidatedGraph> graph) {
    Operation o;
    auto op = std::make_shared<const ValidatedOp>(graph->output_node().op);
    o.impl_ = std::make_shared<const OperationState>(OperationState{std::move(op), std::move(graph)});
    return o;
  }
  // `o` is not empty.
  static const OperationState& state(const Operation& o) { return *static_cast<const OperationState*>(o.impl_.get()); }
  static const ValidatedOp& op(const Operation& o) { return *state(o).op; }
  static std::shared_ptr<const ValidatedOp> shared(const Operation& o) { return state(o).op; }
  // The expression's graph, or nullptr for one operator.
  static const ValidatedGraph* graph(const Operation& o) { return state(o).graph.get(); }
};

// The validated operation of a non-empty Operation.
inline const ValidatedOp& validated(const Operation& o) { return OperationAccess::op(o); }

struct BackendCache::Impl {
  CachedBackends backends;
};

struct BackendCacheAccess {
  static CachedBackends& backends(BackendCache& cache) { return cache.impl_->backends; }
};

}  // namespace dmlbits
