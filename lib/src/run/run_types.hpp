// The types the run layer's files share (request.cpp, operation_output.cpp, run.cpp, stream.cpp,
// backend.cpp): the bottom of lib/src/run. It includes nothing of the run layer and not the
// public dmlbits/request.hpp, so that every file of the layer may include it and every include
// in the layer points down. The two enums of request.hpp that lower headers name are declared
// here opaquely (their enumerators are request.hpp's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dmlbits/tensor.hpp"
#include "json_tensor.hpp"
#include "graph.hpp"
#include "validate.hpp"

namespace dmlbits {

enum class BackendKind : std::uint8_t;     // dmlbits/request.hpp
enum class InstructionSet : std::uint8_t;  // dmlbits/request.hpp
class Backend;
class BackendCache;

// Where a result is written.
struct OutputTarget {
  OutputTarget(std::string to, TensorFormat as, JsonWriteOptions json_options = {})
      : path(std::move(to)), format(as), json(json_options) {}

  std::string path;  // a file (written atomically), or "-" for standard output
  TensorFormat format;
  JsonWriteOptions json;  // TensorFormat::json only
  // TensorFormat::npy only: the output will be a new file (not "-", a device or a FIFO), which a
  // streamed run may write at offsets.
  bool new_file = false;
};

// A BackendCache's backends: one per (kind, isa, threads, adapter, large output for auto), the
// instruction set and threads as the prepared request resolved them (DMLBITS_ISA and
// DMLBITS_THREADS included), so that a changed variable gets a backend of its own, as a new
// process would.
struct CachedBackends {
  struct Key {
    BackendKind kind;
    std::optional<InstructionSet> isa;
    unsigned threads;
    std::string adapter;
    bool large;
    bool operator==(const Key&) const = default;
  };
  // An operation the entry's backend accepted, kept so that the same operation on operands of
  // the same dtypes and shapes is not validated again: validate() is a pure function of the
  // request, and the backend's refusal (unsupported_reason) of the backend. Refusals are never
  // kept, so they are made, and worded, afresh.
  struct Validated {
    OpRequest request;
    std::shared_ptr<const ValidatedOp> op;
    std::shared_ptr<const ValidatedGraph> graph;  // op as a graph of one node, as it runs
  };
  struct Entry {
    Key key;
    std::shared_ptr<Backend> backend;  // shared with the OperationPlans made on it
    std::vector<Validated> validated;  // at most kValidatedPerBackend: a linear search
    std::size_t next_replaced = 0;     // when full, replaced in turn
  };
  static constexpr std::size_t kValidatedPerBackend = 16;
  std::vector<Entry> backends;  // few: a linear search
};

// The backends a BackendCache keeps (its private state, operation_access.hpp; defined in run.cpp,
// where they are used).
CachedBackends& cached_backends(BackendCache& cache);

}  // namespace dmlbits
