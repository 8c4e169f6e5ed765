// CpuBackend::run_graph: a flat graph of two or more nodes in one tiled pass (fused.hpp); any
// other graph node by node, each node's run() over whole tensors (the Backend default).
#include <algorithm>
#include <cstring>
#include <optional>

#include "cpu_backend.hpp"
#include "dmlbits/error.hpp"
#include "fused.hpp"

namespace dmlbits {
namespace {

// The raw bits of a one-element buffer of `width` bytes, zero-extended.
std::uint64_t element_bits(std::span<const std::byte> bytes, std::size_t width) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, bytes.data(), std::min(width, sizeof bits));  // little-endian hosts only (x86-64)
  return bits;
}

}  // namespace

bool CpuBackend::fuses(const ValidatedGraph& graph) {
  return graph.nodes().size() >= 2 && graph.is_flat_streamable() && graph.nodes().size() <= kMaxFusedNodes;
}

void CpuBackend::run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) {
  const std::uint64_t total = graph.output_shape().element_count();
  if (total == 0) return;
  if (!fuses(graph)) {
    Backend::run_graph(graph, buffers);
    return;
  }
  const Shape& out_shape = graph.output_shape();
  FusedProgram program;
  std::vector<const void*> inputs;
  for (std::size_t i = 0; i < graph.inputs().size(); ++i) {
    const OperandInfo& in = graph.inputs()[i];
    program.input_widths.push_back(static_cast<std::uint8_t>(dtype_info(in.dtype).size));
    program.input_is_scalar.push_back(!(in.shape == out_shape));
    inputs.push_back(buffers.inputs[i].data());
  }
  // One-element constants are the program's constants; a list of the output's shape is an input.
  std::vector<std::optional<FusedValue>> constant_values(graph.constants().size());
  std::vector<std::uint32_t> constant_inputs(graph.constants().size());
  for (std::size_t i = 0; i < graph.constants().size(); ++i) {
    const GraphConstant& c = graph.constants()[i];
    const std::size_t width = dtype_info(c.dtype).size;
    if (c.shape == out_shape && c.shape.element_count() != 1) {
      constant_inputs[i] = static_cast<std::uint32_t>(inputs.size());
      program.input_widths.push_back(static_cast<std::uint8_t>(width));
      program.input_is_scalar.push_back(false);
      inputs.push_back(buffers.constants[i].data());
    } else {
      constant_values[i] = FusedValue{FusedValue::Kind::constant, 0, element_bits(buffers.constants[i], width)};
    }
  }
  const auto value = [&](const GraphValue& v) -> FusedValue {
    switch (v.kind) {
      case GraphValue::Kind::input:
        return {FusedValue::Kind::input, v.index, 0};
      case GraphValue::Kind::constant:
        return constant_values[v.index] ? *constant_values[v.index]
                                        : FusedValue{FusedValue::Kind::input, constant_inputs[v.index], 0};
      case GraphValue::Kind::node:
        break;
    }
    return {FusedValue::Kind::node, v.index, 0};
  };
  for (const GraphNode& n : graph.nodes()) {
    FusedNode f;
    f.op = n.op.op().kind;
    f.width = static_cast<std::uint8_t>(dtype_info(n.op.input_dtype()).size);
    f.out_width = static_cast<std::uint8_t>(dtype_info(n.op.output_dtype()).size);
    f.a = value(n.args[0]);
    if (n.op.op().arity == 2) f.b = value(n.args[1]);
    f.shift_overflow = n.op.shift_overflow();
    program.nodes.push_back(f);
  }
  const FusedRunner runner(std::move(program), isa_, per_operation_choice_);

  // Threads as run() takes them for one operator, by the bytes the graph reads and writes.
  const std::uint64_t work_bytes = std::max(graph.output_bytes(), graph.input_bytes());
  const unsigned wanted = thread_count(work_bytes).threads;
  std::optional<ThreadLease> lease;
  if (wanted > 1 && default_threads_) lease.emplace(wanted);
  const unsigned threads = lease ? lease->threads() : wanted;
  runner.run(total, inputs, buffers.output.data(), threads);
}

}  // namespace dmlbits
