// D3d12Backend: a ValidatedOp as dispatches of the gpu_kernel.hpp kernels, in chunks that fit
// the device's limits. No D3D12 types here: d3d12_runtime.cpp makes the calls.
//
// Chunking. Each buffer holds at most max_buffer_bytes (256 MiB by default: below lavapipe's
// 2 GiB crash and below the 512 MiB that a 2^27-element texel buffer, the smallest limit
// common drivers put on vkd3d's root buffer views, can address), so each dispatch computes at
// most max_buffer_bytes / (widest element) outputs, far below 2^32. Packed operations are cut
// into flat runs; strided ones into boxes: the outer dimensions fixed, a run of rows along one
// dimension, the inner dimensions whole. A box's output is one contiguous run, and each input's
// elements for it lie in one contiguous range. An input that fits in one buffer is uploaded once
// per run and each box addresses it with base offsets; a larger one is uploaded box by box.
#include <algorithm>
#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "box_grid.hpp"
#include "copy_team.hpp"
#include "d3d12_runtime.hpp"
#include "d3d12_backend.hpp"
#include "d3d12_device.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace d3d12 {
namespace {
std::atomic<KernelSource> kernel_source{nullptr};
}

void set_kernel_source(KernelSource source) { kernel_source.store(source); }

std::vector<std::uint8_t> kernel_bytecode(const gpu::KernelKey& key) {
  if (KernelSource s = kernel_source.load()) return s(key);
  return gpu::build_kernel(key);
}

}  // namespace d3d12

namespace {

constexpr std::uint64_t kMaxBufferLimit = std::uint64_t{1} << 30;

// The kernel that runs `d`: its operator and element widths, and whether it needs strides.
gpu::KernelKey kernel_key(const DmlOperatorDesc& d, std::uint64_t in_size, std::uint64_t out_size) {
  gpu::KernelKey key;
  key.op = d.op;
  key.in_bits = static_cast<unsigned>(in_size * 8);
  key.out_bits = static_cast<unsigned>(out_size * 8);
  if (op_info(d.op).shift) key.shift_overflow = d.shift_overflow;
  key.strided = false;
  for (const auto& in : d.inputs)
    if (in.sizes != d.output.sizes || !in.is_packed()) key.strided = true;
  return key;
}

// The inputs of one run as its dispatches take them: an input that fits in one buffer is
// uploaded whole by the first dispatch and kept by the others; a larger one is uploaded range
// by range.
class InputUploads {
 public:
  // Throws Errc::internal if an input's buffer holds fewer elements than the operation reads.
  InputUploads(const DmlOperatorDesc& d, const ExecuteBuffers& buffers, std::uint64_t in_size, std::uint64_t max_bytes)
      : buffers_(buffers), in_size_(in_size), count_(static_cast<unsigned>(d.inputs.size())) {
    const std::size_t rank = d.output.sizes.size();
    // Elements each input spans (its buffer holds at least these, rounded down to whole elements).
    for (unsigned j = 0; j < count_; ++j) {
      std::uint64_t span = 1;
      for (std::size_t i = 0; i < rank; ++i) span += (d.output.sizes[i] - 1) * d.inputs[j].strides[i];
      in_elems_[j] = span;
      if (buffers.inputs[j].size() < span * in_size)
        throw Error(Errc::internal, fmt::format("d3d12: input {} holds {} bytes, the operation reads {}", j,
                                                buffers.inputs[j].size(), span * in_size));
    }
    for (unsigned j = 0; j < count_; ++j) whole_[j] = in_elems_[j] * in_size <= max_bytes;
  }

  unsigned count() const { return count_; }

  // Input j's range [start, start + count) for one dispatch: uploaded whole once (base = start)
  // or as this range alone (base = 0).
  d3d12::DispatchJob::Input range(unsigned j, std::uint64_t start, std::uint64_t count, std::uint32_t& base) {
    d3d12::DispatchJob::Input in;
    if (whole_[j]) {
      base = static_cast<std::uint32_t>(start);
      if (uploaded_[j]) in.keep = true;
      else in.upload = buffers_.inputs[j].first(in_elems_[j] * in_size_);
      uploaded_[j] = true;
    } else {
      base = 0;
      in.upload = buffers_.inputs[j].subspan(start * in_size_, count * in_size_);
    }
    return in;
  }

 private:
  const ExecuteBuffers& buffers_;
  std::uint64_t in_size_;
  unsigned count_;
  std::array<std::uint64_t, 2> in_elems_{};
  std::array<bool, 2> whole_{};
  std::array<bool, 2> uploaded_{};  // whole inputs already on the device for this run
};

// The graph kernel for `g`, or why there is none (D3d12Backend::fusion_refusal). The kernel's
// leaves are the graph's inputs, then its constants.
std::optional<std::string> graph_kernel_key(const ValidatedGraph& g, gpu::GraphKernelKey& key) {
  if (g.nodes().size() < 2) return std::string("one node: the operator's own kernel");
  if (!g.is_flat_streamable()) return std::string("an input or node broadcast along some dimensions only (not flat)");
  const auto bits = [](DType d) { return static_cast<unsigned>(dtype_info(d).size * 8); };
  for (const OperandInfo& in : g.inputs()) key.leaves.push_back({bits(in.dtype), in.shape.element_count() == 1});
  for (const GraphConstant& c : g.constants()) key.leaves.push_back({bits(c.dtype), c.shape.element_count() == 1});
  const auto inputs = static_cast<std::uint32_t>(g.inputs().size());
  for (const GraphNode& n : g.nodes()) {
    const OpInfo& op = n.op.op();
    if (op.shader == ShaderFamily::none) return fmt::format("no GPU kernel for {}", op.verb);
    gpu::GraphNodeKey node;
    node.op = op.kind;
    node.in_bits = bits(n.op.input_dtype());
    node.out_bits = bits(n.op.output_dtype());
    if (op.shift) node.shift_overflow = n.op.desc().shift_overflow;
    for (int a = 0; a < op.arity; ++a) {
      const GraphValue& v = n.args[static_cast<std::size_t>(a)];
      gpu::GraphArgKey& arg = node.args[static_cast<std::size_t>(a)];
      arg.node = v.kind == GraphValue::Kind::node;
      arg.index = v.kind == GraphValue::Kind::constant ? inputs + v.index : v.index;
    }
    key.nodes.push_back(node);
  }
  if (std::string why = gpu::graph_kernel_refusal(key); !why.empty()) return why;
  return std::nullopt;
}

}  // namespace

struct D3d12Backend::Impl {
  D3d12BackendOptions options;
  std::shared_ptr<d3d12::Device> device;
  double device_seconds = 0;
  d3d12::PhaseSeconds phases;

  // Runs one dispatch of `count` outputs written to `out` (bytes), under the device's mutex.
  d3d12::CopyTeam* team = nullptr;  // for the run under way (run())

  void dispatch(const gpu::KernelKey& key, gpu::KernelConstants constants, unsigned inputs,
                const std::array<d3d12::DispatchJob::Input, 2>& in, std::uint32_t count, std::span<std::byte> out) {
    d3d12::DispatchJob job;
    job.key = key;
    job.inputs = inputs;
    std::copy(in.begin(), in.end(), job.input.begin());
    const gpu::DispatchGrid grid = gpu::dispatch_grid(key, count);
    job.groups = grid.groups;
    constants.count = count;
    constants.threads = grid.threads;
    job.constants = constants;
    job.output_buffer_bytes = std::max<std::uint64_t>(gpu::output_units(key, count), 1) * gpu::unit_bytes(key);
    job.output = out;
    job.piece_bytes = options.transfer_piece_bytes;
    device->dispatch(job, phases, team);
  }

  // A packed run: flat chunks of at most max_elems outputs.
  void run_packed(const gpu::KernelKey& key, InputUploads& uploads, std::span<std::byte> output, std::uint64_t total,
                  std::uint64_t max_elems, std::uint64_t out_size) {
    for (std::uint64_t done = 0; done < total;) {
      const std::uint64_t n = std::min(max_elems, total - done);
      gpu::KernelConstants c;
      std::array<d3d12::DispatchJob::Input, 2> in{};
      for (unsigned j = 0; j < uploads.count(); ++j) in[j] = uploads.range(j, done, n, c.base[j]);
      dispatch(key, c, uploads.count(), in, static_cast<std::uint32_t>(n),
               output.subspan(done * out_size, n * out_size));
      done += n;
    }
  }

  // A strided run: one dispatch per box of `grid`.
  void run_strided(const gpu::KernelKey& key, const DmlOperatorDesc& d, InputUploads& uploads,
                   std::span<std::byte> output, const BoxGrid& grid, std::uint64_t out_size) {
    const auto& s = d.output.sizes;
    const std::size_t rank = s.size();
    std::vector<std::uint64_t> index(rank, 0);  // the box's first element
    const std::size_t pad = gpu::kMaxRank - rank;
    std::uint64_t r = 0;  // the box's rows along grid.split
    do {
      r = std::min(grid.rows, s[grid.split] - index[grid.split]);
      gpu::KernelConstants c;
      std::uint64_t count = 1;
      for (std::size_t i = 0; i < gpu::kMaxRank; ++i) c.sizes[i] = 1;
      for (std::size_t i = 0; i < rank; ++i) {
        const std::uint64_t size = i < grid.split ? 1 : i == grid.split ? r : s[i];
        c.sizes[pad + i] = static_cast<std::uint32_t>(size);
        count *= size;
      }
      std::uint64_t out_offset = 0;
      for (std::size_t i = 0; i < rank; ++i) out_offset += index[i] * grid.out_strides[i];
      std::array<d3d12::DispatchJob::Input, 2> in{};
      for (unsigned j = 0; j < uploads.count(); ++j) {
        const auto& st = d.inputs[j].strides;
        std::uint64_t start = 0, extent = 1;
        for (std::size_t i = 0; i < rank; ++i) {
          start += index[i] * st[i];
          const std::uint64_t size = c.sizes[pad + i];
          extent += (size - 1) * st[i];
          c.strides[j][pad + i] = size == 1 ? 0 : static_cast<std::uint32_t>(st[i]);
        }
        in[j] = uploads.range(j, start, extent, c.base[j]);
      }
      dispatch(key, c, uploads.count(), in, static_cast<std::uint32_t>(count),
               output.subspan(out_offset * out_size, count * out_size));
    } while (grid.advance(index, r));
  }
};

D3d12Backend::D3d12Backend(D3d12BackendOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  auto& max = impl_->options.max_buffer_bytes;
  max = std::clamp<std::uint64_t>(max, 4096, kMaxBufferLimit);
  impl_->device = d3d12::Device::acquire(chosen_adapter(impl_->options.adapter), &impl_->device_seconds);
}

D3d12Backend::~D3d12Backend() = default;

const D3d12DeviceInfo& D3d12Backend::device_info() const { return impl_->device->info(); }

DeviceDescription D3d12Backend::device_description() const {
  const D3d12DeviceInfo& i = device_info();
  return {.kind = DeviceKind::d3d12,
          .adapter = i.adapter.name,
          .adapter_index = i.adapter.index,
          .software = i.adapter.software,
          .feature_level = i.feature_level,
          .shader_model = i.shader_model};
}

std::optional<std::string> D3d12Backend::unsupported_reason(const ValidatedOp& op) const {
  if (op.op().shader == ShaderFamily::none)
    return fmt::format("no GPU kernel for {} (the CPU backends run it)", op.op().verb);
  if (op.desc().output.dimension_count() > gpu::kMaxRank)
    return fmt::format("{} dimensions (the kernels take at most {})", op.desc().output.dimension_count(),
                       gpu::kMaxRank);
  return std::nullopt;
}

std::vector<PhaseTime> D3d12Backend::detail_phases() const {
  const auto& p = impl_->phases;
  std::vector<PhaseTime> phases{{"device", impl_->device_seconds}, {"pipeline", p.pipeline}, {"upload", p.upload},
                                {"dispatch", p.dispatch},          {"readback", p.readback}, {"submit", p.submit}};
  if (p.streamed > 0) phases.push_back({"streamed", p.streamed});  // only where a run streamed through the heaps
  return phases;
}

void D3d12Backend::run(const ValidatedOp& op, const ExecuteBuffers& buffers) {
  const DmlOperatorDesc& d = op.desc();
  if (d.empty) return;
  const auto in_size = static_cast<std::uint64_t>(dtype_info(op.input_dtype()).size);
  const auto out_size = static_cast<std::uint64_t>(dtype_info(op.output_dtype()).size);
  const unsigned inputs = static_cast<unsigned>(d.inputs.size());
  const std::size_t rank = d.output.sizes.size();
  if (rank > gpu::kMaxRank || inputs < 1 || inputs > 2)
    throw Error(Errc::internal, "d3d12: operation outside the kernels' contract");

  const gpu::KernelKey key = kernel_key(d, in_size, out_size);
  const std::uint64_t max_bytes = impl_->options.max_buffer_bytes;
  // Outputs per dispatch: a multiple of 64 elements, so that packed chunks start on a word.
  const std::uint64_t max_elems =
      std::max<std::uint64_t>(64, (max_bytes / std::max(in_size, out_size)) & ~std::uint64_t{63});
  InputUploads uploads(d, buffers, in_size, max_bytes);

  const std::uint64_t total = d.output.element_count();
  // The CPU's copies into and out of the heaps, a piece at a time, split over threads where a
  // piece is large enough (copy_team.hpp); the team lives for this run.
  std::uint64_t largest = total * out_size;
  for (const auto& in : buffers.inputs) largest = std::max<std::uint64_t>(largest, in.size());
  const unsigned copy_threads = impl_->options.copy_threads;
  d3d12::CopyTeam team(d3d12::copy_threads_for(std::min(largest, impl_->options.transfer_piece_bytes), copy_threads),
                       copy_threads);

  std::lock_guard lock(impl_->device->mutex());
  impl_->team = &team;
  struct Clear {
    d3d12::CopyTeam*& team;
    ~Clear() { team = nullptr; }
  } clear{impl_->team};
  if (!key.strided) impl_->run_packed(key, uploads, buffers.output, total, max_elems, out_size);
  else impl_->run_strided(key, d, uploads, buffers.output, BoxGrid(d.output.sizes, total, max_elems), out_size);
}

bool D3d12Backend::run_staged(const ValidatedOp& op, StagedIo& io) {
  const std::uint64_t count = op.output_shape().element_count();
  const ValidatedOp flat = op.flat_chunk(count);
  const DmlOperatorDesc& d = flat.desc();
  const auto in_size = static_cast<std::uint64_t>(dtype_info(op.input_dtype()).size);
  const auto out_size = static_cast<std::uint64_t>(dtype_info(op.output_dtype()).size);
  const unsigned inputs = static_cast<unsigned>(d.inputs.size());
  if (inputs < 1 || inputs > 2) throw Error(Errc::internal, "d3d12: operation outside the kernels' contract");
  d3d12::StreamJob job;
  job.key = kernel_key(d, in_size, out_size);
  job.inputs = inputs;
  job.in_size = in_size;
  job.out_size = out_size;
  job.count = count;
  // Pieces of stream_piece_bytes of the wider element, whole 64-element runs (packed units and
  // padded inputs start on a word).
  const std::uint64_t wider = std::max(in_size, out_size);
  const bool software = device_info().adapter.software;
  std::uint64_t piece_bytes = impl_->options.stream_piece_bytes;
  if (piece_bytes == 0) piece_bytes = software ? d3d12::kSoftwareStreamPieceBytes : d3d12::kTransferPieceBytes;
  job.in_flight = impl_->options.stream_in_flight;
  if (job.in_flight == 0) job.in_flight = software ? d3d12::kSoftwareStreamInFlight : d3d12::kTransferSlots;
  job.piece_elements = std::max<std::uint64_t>(64, piece_bytes / wider / 64 * 64);
  for (unsigned j = 0; j < inputs; ++j) {
    job.scalar[j] = count > 1 && d.inputs[j].strides.back() == 0;
    for (unsigned i = 0; i < gpu::kMaxRank; ++i) job.constants.sizes[i] = 1;
    job.constants.strides[j][gpu::kMaxRank - 1] = job.scalar[j] ? 0 : 1;
  }
  // Reads or writes at offsets (regular files) are split over threads; a pipe's stay in order.
  const bool splits = io.concurrent_reads() || io.concurrent_writes();
  const unsigned copy_threads = impl_->options.copy_threads;
  d3d12::CopyTeam team(splits ? d3d12::copy_threads_for(std::min(count, job.piece_elements) * wider, copy_threads) : 1,
                       copy_threads);
  std::lock_guard lock(impl_->device->mutex());
  impl_->device->stream(job, io, impl_->phases, &team);
  return true;
}

std::optional<std::string> D3d12Backend::graph_fusion_refusal(const ValidatedGraph& graph) {
  gpu::GraphKernelKey key;
  return graph_kernel_key(graph, key);
}

void D3d12Backend::run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) {
  gpu::GraphKernelKey key;
  if (graph_kernel_key(graph, key)) {
    Backend::run_graph(graph, buffers);
    return;
  }
  const std::uint64_t total = graph.output_shape().element_count();
  const auto out_size = static_cast<std::uint64_t>(dtype_info(graph.output_dtype()).size);
  if (buffers.output.size() < total * out_size)
    throw Error(Errc::internal,
                fmt::format("d3d12: a graph's output of {} bytes for {} elements", buffers.output.size(), total));
  if (total == 0) return;
  // The leaves' memory (inputs, then constants): buffers are uploaded chunk by chunk, scalars
  // are root constants, zero-extended to a word (two for 64-bit elements, low word first).
  std::vector<std::span<const std::byte>> leaves(buffers.inputs.begin(), buffers.inputs.end());
  leaves.insert(leaves.end(), buffers.constants.begin(), buffers.constants.end());
  if (leaves.size() != key.leaves.size())
    throw Error(Errc::internal, fmt::format("d3d12: a graph of {} inputs and constants given {} buffers",
                                            key.leaves.size(), leaves.size()));
  gpu::GraphConstants constants;
  std::vector<std::pair<std::span<const std::byte>, std::uint64_t>> uploads;  // buffer leaves, element bytes
  std::uint64_t widest = out_size;
  unsigned word = 0;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    const std::uint64_t size = key.leaves[i].bits / 8;
    const std::uint64_t elements = key.leaves[i].scalar ? 1 : total;
    if (leaves[i].size() < elements * size)
      throw Error(Errc::internal, fmt::format("d3d12: graph input {} holds {} bytes, the graph reads {}", i,
                                              leaves[i].size(), elements * size));
    if (key.leaves[i].scalar) {
      std::uint32_t words[2]{};
      std::memcpy(words, leaves[i].data(), size);
      for (std::uint64_t w = 0; w < (size + 3) / 4; ++w) constants.scalars[word++] = words[w];
    } else {
      uploads.emplace_back(leaves[i], size);
      widest = std::max(widest, size);
    }
  }
  // Outputs per dispatch: each buffer (inputs and output) within max_buffer_bytes. Every chunk
  // uploads its own range of each input at base 0.
  const std::uint64_t max_elems =
      std::max<std::uint64_t>(64, (impl_->options.max_buffer_bytes / widest) & ~std::uint64_t{63});
  std::uint64_t largest = std::min(total, max_elems) * widest;
  d3d12::CopyTeam team(d3d12::copy_threads_for(std::min(largest, impl_->options.transfer_piece_bytes)));

  std::lock_guard lock(impl_->device->mutex());
  for (std::uint64_t done = 0; done < total;) {
    const std::uint64_t n = std::min(max_elems, total - done);
    d3d12::DispatchJob job;
    job.graph = &key;
    job.inputs = static_cast<unsigned>(uploads.size());
    for (std::size_t t = 0; t < uploads.size(); ++t) {
      const auto& [data, size] = uploads[t];
      job.input[t].upload = data.subspan(done * size, n * size);
    }
    const gpu::DispatchGrid grid = gpu::graph_dispatch_grid(key, static_cast<std::uint32_t>(n));
    job.groups = grid.groups;
    job.graph_constants = constants;
    job.graph_constants.count = static_cast<std::uint32_t>(n);
    job.graph_constants.threads = grid.threads;
    job.output_buffer_bytes =
        std::max<std::uint64_t>(gpu::graph_output_units(key, static_cast<std::uint32_t>(n)), 1) * 16;
    job.output = buffers.output.subspan(done * out_size, n * out_size);
    job.piece_bytes = impl_->options.transfer_piece_bytes;
    impl_->device->dispatch(job, impl_->phases, &team);
    done += n;
  }
}

D3d12DeviceInfo probe_d3d12_device(const GpuAdapter& adapter) {
  if (auto why = d3d12::runtime_unavailable_reason())
    throw Error(Errc::backend, fmt::format("no D3D12 runtime: {}", *why));
  return d3d12::Device::acquire(adapter, nullptr)->info();
}

std::optional<std::string> d3d12_runtime_unavailable_reason() { return d3d12::runtime_unavailable_reason(); }

bool d3d12_built() { return true; }

std::string_view d3d12_runtime_name() { return d3d12::runtime_name(); }

namespace d3d12 {
SharedDevice shared_device(std::string_view adapter_spec) {
  SharedDevice shared;
  shared.owner = Device::acquire(chosen_adapter(adapter_spec), nullptr);
  shared.adapter = &shared.owner->info().adapter;
  shared.device = shared.owner->native_device();
  shared.queue = shared.owner->native_queue();
  shared.mutex = &shared.owner->mutex();
  return shared;
}
}  // namespace d3d12

const GpuAdapter& chosen_adapter(std::string_view spec) {
  if (auto why = d3d12::runtime_unavailable_reason())
    throw Error(Errc::backend, fmt::format("the d3d12 backend cannot run: no D3D12 runtime: {}", *why));
  const AdapterList& list = gpu_adapters();
  if (list.adapters.empty())
    throw Error(Errc::backend, fmt::format("the d3d12 backend cannot run: no adapter: {}", list.error));
  return spec.empty() ? *default_adapter(list.adapters) : find_adapter(list.adapters, spec);
}

}  // namespace dmlbits
