// The library's side of the public handles (dmlbits/request.hpp): an Operation's validated
// operation and a BackendCache's backends, which the public types hold opaquely so that no
// internal type shows in a public signature.
#pragma once

#include <memory>

#include "dmlbits/plan.hpp"
#include "dmlbits/request.hpp"
#include "run_types.hpp"
#include "validate.hpp"

namespace dmlbits {

struct OperationAccess {
  static Operation make(std::shared_ptr<const ValidatedOp> op) {
    Operation o;
    o.impl_ = std::move(op);
    return o;
  }
  // `o` is not empty.
  static const ValidatedOp& op(const Operation& o) { return *static_cast<const ValidatedOp*>(o.impl_.get()); }
  static std::shared_ptr<const ValidatedOp> shared(const Operation& o) {
    return std::static_pointer_cast<const ValidatedOp>(o.impl_);
  }
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
