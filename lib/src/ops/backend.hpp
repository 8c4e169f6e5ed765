// The backend interface, below every backend (the ops layer): a backend runs a ValidatedOp on
// buffers laid out as the op's DirectML descriptors say (inputs may be smaller than the output
// and read through stride-0 dimensions); it never sees an unvalidated operation. Choosing and
// creating a backend is the run layer's (make_backend.hpp).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/timing.hpp"
#include "graph.hpp"
#include "staging.hpp"
#include "validate.hpp"

namespace dmlbits {

struct ExecuteBuffers {
  // One per input, each at least desc().inputs[i].total_bytes long (rounded down to whole
  // elements: dmlbits' own tensors are not padded to 4 bytes).
  std::vector<std::span<const std::byte>> inputs;
  // desc().output's elements, packed. May be the same memory as inputs[0] when in_place().
  std::span<std::byte> output;
};

// A graph's memory: its inputs and constants each packed in its own shape (a graph node reads
// them through its ValidatedOp's stride-0 descriptors), the output packed in the output's shape.
struct GraphBuffers {
  std::vector<std::span<const std::byte>> inputs;     // ValidatedGraph::inputs()' order
  std::vector<std::span<const std::byte>> constants;  // ValidatedGraph::constants()' order
  std::span<std::byte> output;
};

// One operation's run with every choice that depends on the operation alone made once (for the
// CPU backend: its loop over the layout, its kernel, its thread count), for a caller that runs
// the same operation again and again on new memory (a kept plan, plan.hpp): run() then only
// computes. It holds nothing of the backend that made it.
class PreparedRun {
 public:
  virtual ~PreparedRun() = default;
  // What Backend::run(op, buffers) computes, for the op it was prepared for: inputs[i] and
  // output point at buffers the op's descriptors fit, as Backend::run requires (unchecked: the
  // caller's plan has checked the shapes and dtypes once for all).
  virtual void run(std::span<const std::byte* const> inputs, std::byte* output) const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Which device or implementation runs the op, for -v and timing reports (as data: the faces
  // word it, device_text in dmlbits/timing.hpp).
  virtual DeviceDescription device_description() const = 0;
  // The same for a run of `op` (one chunk's operation when `extra_threads` is not 0: a streamed
  // run that uses that many threads beside the computing one, stream.cpp's pipeline (1) or
  // slices (N - 1)): the CPU backend names the threads such a run uses, which are fewer than it
  // may use for small outputs. `why`, when not plain, says why: for a run on one thread that
  // could have used more, the reason (a streamed run under a size, a pipe that cannot be split);
  // for one on several, how the work is shared between them.
  virtual DeviceDescription device_description_for(const ValidatedOp& op, unsigned extra_threads,
                                                   const ThreadWhy& why = {}) const {
    (void)op;
    (void)extra_threads;
    (void)why;
    return device_description();
  }
  // nullopt if run() can execute `op`, else the reason it cannot.
  virtual std::optional<std::string> unsupported_reason(const ValidatedOp& op) const = 0;
  // Computes the output. Throws Errc::backend on a device failure.
  virtual void run(const ValidatedOp& op, const ExecuteBuffers& buffers) = 0;
  // A PreparedRun of `op` (which unsupported_reason() accepts), or nullptr where the backend
  // makes none for it (the caller then uses run()). The same results and errors as run().
  virtual std::unique_ptr<PreparedRun> prepare_run(const ValidatedOp& op) const {
    (void)op;
    return nullptr;
  }
  // nullopt if run_graph() can execute `graph`: every node's operator (unsupported_reason of each).
  virtual std::optional<std::string> unsupported_graph_reason(const ValidatedGraph& graph) const {
    for (const GraphNode& n : graph.nodes())
      if (auto why = unsupported_reason(n.op)) return why;
    return std::nullopt;
  }
  // Computes the graph's output: by default node by node through run(), each node into a
  // full-size temporary (run_graph_nodes); a backend that fuses the nodes into one pass
  // overrides it, and must give the same bytes. Throws as run() does.
  virtual void run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) {
    run_graph_nodes(graph, *this, buffers.inputs, buffers.constants, buffers.output);
  }
  // Whether it computes on the calling process's CPU threads, so that a streamed run may read
  // and write on a second thread beside it (a device backend stays on the thread that made it).
  virtual bool computes_on_cpu() const { return false; }
  // Why make_backend() chose this backend (selection_text: "auto chose cpu: ..."), for -v;
  // SelectionRule::named when the caller named it.
  virtual Selection selection() const { return {}; }
  // A backend that computes on CPU threads: how many and why (thread_team_text: "2 threads: 2
  // CPUs this process may run on"), for -v. No threads for the others.
  virtual ThreadTeam thread_team() const { return {}; }
  // The backend's own phases, summed since it was created (device creation, then every run):
  // D3D12 reports device, pipeline, upload, dispatch (GPU timestamps) and readback.
  virtual std::vector<PhaseTime> detail_phases() const { return {}; }
  // A streamed run of `op` (flat: is_flat_streamable(), as one 1-D run of every output element)
  // with the backend moving the bytes itself: it reads the inputs through `io` straight into its
  // own staging memory and writes the output from there, piece by piece, several in flight.
  // Returns false, having done nothing, when it does not (the stream layer then runs the
  // operation chunk by chunk through run()). Throws as run() does, and whatever `io` throws.
  virtual bool run_staged(const ValidatedOp& op, StagedIo& io) {
    (void)op;
    (void)io;
    return false;
  }
};

}  // namespace dmlbits
