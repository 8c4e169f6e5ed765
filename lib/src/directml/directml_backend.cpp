// DirectmlBackend on Windows: DirectML.dll loaded at run time, on the d3d12 backend's D3D12 device
// for the chosen adapter (d3d12_device.hpp: the same --adapter rules, the same device and queue),
// and one DirectML device per adapter and requested feature level.
//
// A run is cut into boxes as the d3d12 backend cuts it (box_grid.hpp): a tensor that fits in one
// buffer is one DirectML operator with exactly the descriptors `--explain` prints; a larger one
// is a few operators of the boxes' shapes (at most two: whole boxes and the last one), each
// compiled once and cached. Each box uploads the range of each input it reads, binds the
// buffers through its operator's descriptor heap (IDMLBindingTable), records the dispatch with
// IDMLCommandRecorder, and reads its output back.
// DirectX-Headers' d3d12.h (mingw's own is too old), as the d3d12 layer's Windows build takes it:
// MIDL's d3d12.h demands rpcndr.h version 500 while mingw's is 475 (mingw's headers work with
// it); included first, its include guard skips the check.
#define NOMINMAX
#include <rpc.h>
#include <rpcndr.h>
#include <directx/d3d12.h>
#include <dxguids/dxguids.h>

#include "dml_api.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>

#include <fmt/format.h>

#include "box_grid.hpp"
#include "com.hpp"
#include "d3d12_buffer.hpp"
#include "d3d12_device.hpp"
#include "d3d12_runtime.hpp"
#include "directml_backend.hpp"
#include "directml_internal.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/timing.hpp"
#include "dynamic_library.hpp"
#include "environment.hpp"

namespace dmlbits {
namespace directml {
namespace {

using d3d12::Buffer;
using d3d12::check_hresult;
using d3d12::Com;

constexpr const char* kDefaultLibrary = "DirectML.dll";

template <class T>
GUID iid() {
  return uuidof<T>();
}

// ---- the libraries ---------------------------------------------------------------------------

struct Library {
  std::string name;  // as asked for
  DynamicLibrary dml;
  std::string error;  // empty when DirectML can be used
  std::string path, version;
  dml::PFN_DMLCreateDevice1 create_device1 = nullptr;
};

Library load() {
  Library lib;
  const std::string env = environment_variable("DMLBITS_DIRECTML_LIBRARY").value_or("");
  lib.name = env.empty() ? kDefaultLibrary : env;
  // DirectML is redistributed beside the program that uses it (Windows' own copy in System32,
  // where there is one, is older): the program's folder first, then the system's.
  lib.dml = DynamicLibrary::open_beside_program(lib.name);
  if (!lib.dml.loaded()) {
    lib.error = fmt::format("{} (set DMLBITS_DIRECTML_LIBRARY to its path, or put DirectML.dll beside dmlbits.exe)",
                            lib.dml.error());
    return lib;
  }
  lib.path = lib.dml.file_path();
  lib.version = lib.dml.file_version().value_or("unknown version");
  lib.create_device1 = lib.dml.function<dml::PFN_DMLCreateDevice1>("DMLCreateDevice1");
  if (!lib.create_device1) {
    lib.error = fmt::format(
        "{} ({}, version {}) has no DMLCreateDevice1: too old (DirectML 1.1 or later is needed), "
        "or not DirectML",
        lib.name, lib.path, lib.version);
    return lib;
  }
  return lib;
}

const Library& library() {
  static const Library lib = load();
  return lib;
}

// ---- the operators -----------------------------------------------------------------------------

// One DirectML operator's tensors: a whole operation's descriptors or a box's.
struct OperatorShape {
  OpKind op{};
  std::vector<DmlTensorDesc> inputs;
  DmlTensorDesc output;
};

bool operator<(const DmlTensorDesc& a, const DmlTensorDesc& b) {
  return std::tie(a.dtype, a.sizes, a.strides, a.total_bytes) < std::tie(b.dtype, b.sizes, b.strides, b.total_bytes);
}

struct ShapeLess {
  bool operator()(const OperatorShape& a, const OperatorShape& b) const {
    if (a.op != b.op) return a.op < b.op;
    if (a.inputs.size() != b.inputs.size()) return a.inputs.size() < b.inputs.size();
    for (std::size_t i = 0; i < a.inputs.size(); ++i) {
      if (a.inputs[i] < b.inputs[i]) return true;
      if (b.inputs[i] < a.inputs[i]) return false;
    }
    return a.output < b.output;
  }
};

// DML_BUFFER_TENSOR_DESCs that point into this object's own arrays.
class DmlDescs {
 public:
  explicit DmlDescs(const OperatorShape& s) {
    tensors_.reserve(s.inputs.size() + 1);
    for (const auto& t : s.inputs) add(t);
    add(s.output);
    for (std::size_t i = 0; i < buffers_.size(); ++i) descs_.push_back({dml::DML_TENSOR_TYPE_BUFFER, &buffers_[i]});
    if (s.inputs.size() == 2) {
      binary_ = {&descs_[0], &descs_[1], &descs_[2]};
      op_ = {op_info(s.op).dml_enum, &binary_};
    } else {
      unary_ = {&descs_[0], &descs_[1]};
      op_ = {op_info(s.op).dml_enum, &unary_};
    }
  }
  DmlDescs(const DmlDescs&) = delete;
  DmlDescs& operator=(const DmlDescs&) = delete;
  const dml::DML_OPERATOR_DESC* get() const { return &op_; }

 private:
  struct Arrays {
    std::vector<UINT> sizes, strides;
  };
  static UINT narrow(std::uint64_t v, const char* what) {
    if (v > 0xffffffffu)
      throw Error(Errc::internal, fmt::format("directml: a tensor's {} ({}) exceeds 32 bits", what, v));
    return static_cast<UINT>(v);
  }
  void add(const DmlTensorDesc& t) {
    Arrays a;
    for (auto v : t.sizes) a.sizes.push_back(narrow(v, "size"));
    for (auto v : t.strides) a.strides.push_back(narrow(v, "stride"));
    tensors_.push_back(std::move(a));
    const Arrays& k = tensors_.back();
    dml::DML_BUFFER_TENSOR_DESC b{};
    b.DataType = static_cast<dml::DML_TENSOR_DATA_TYPE>(dtype_info(t.dtype).dml_value);
    b.Flags = static_cast<dml::DML_TENSOR_FLAGS>(t.flags);
    b.DimensionCount = static_cast<UINT>(k.sizes.size());
    b.Sizes = k.sizes.empty() ? nullptr : k.sizes.data();
    b.Strides = k.strides.empty() ? nullptr : k.strides.data();
    b.TotalTensorSizeInBytes = t.total_bytes;
    b.GuaranteedBaseOffsetAlignment = t.guaranteed_base_offset_alignment;
    buffers_.push_back(b);
  }

  std::vector<Arrays> tensors_;  // reserved: the pointers into it stay valid
  std::vector<dml::DML_BUFFER_TENSOR_DESC> buffers_;
  std::vector<dml::DML_TENSOR_DESC> descs_;
  dml::DML_BINARY_BIT_OPERATOR_DESC binary_{};
  dml::DML_UNARY_BIT_OPERATOR_DESC unary_{};
  dml::DML_OPERATOR_DESC op_{};
};

std::string describe(const OperatorShape& s) {
  std::string out = op_info(s.op).dml_operator_name();
  for (const auto& t : s.inputs)
    out += fmt::format(", {} sizes {{{}}} strides {{{}}}", dtype_info(t.dtype).dml_name, fmt::join(t.sizes, ","),
                       fmt::join(t.strides, ","));
  out += fmt::format(", output {} sizes {{{}}}", dtype_info(s.output.dtype).dml_name, fmt::join(s.output.sizes, ","));
  return out;
}

struct Compiled {
  Com<dml::IDMLCompiledOperator> op;
  Com<ID3D12DescriptorHeap> heap;
  Com<dml::IDMLBindingTable> table;
  Buffer persistent, temporary;
  std::uint64_t persistent_bytes = 0, temporary_bytes = 0;  // buffers' sizes (temporary: the larger need)
  std::uint64_t op_temporary_bytes = 0;                     // the operator's own need
};

// A graph as DirectML compiles it (IDMLDevice1::CompileGraph): one operator per node, each
// operand a graph input or an earlier node's output, the last node's output the one graph
// output. Graph inputs are the graph's inputs, then its constants (dmlbits' literals, passed as
// inputs rather than DML_GRAPH_NODE_TYPE_CONSTANT nodes, which need DirectML 1.13), that some
// node reads, in that order: GraphInputIndex. An operand read from a node declares the
// producer's TotalTensorSizeInBytes, the one thing an intermediate edge requires to match.
// Seen on DirectML 1.15.4 (under wine, lavapipe; tests/directml, Graphs): CompileGraph accepts
// and computes right a node reading an intermediate through stride-0 dimensions (its desc
// declaring the producer's total bytes), a node output read by two nodes, one graph input read
// by several nodes or by both ports of one, and one-element constants as stride-0 graph inputs.
struct GraphShape {
  struct Arg {
    bool from_node = false;
    std::uint32_t index = 0;  // GraphInputIndex, or the producing node's index
  };
  struct Node {
    OperatorShape op;
    std::vector<Arg> args;  // one per op.inputs
  };
  std::uint32_t input_count = 0;
  std::vector<Node> nodes;

  // Every field, as text: the compiled graphs' cache key.
  std::string key() const {
    const auto tensor = [](const DmlTensorDesc& t) {
      return fmt::format("{} {{{}}} {{{}}} {}", dtype_info(t.dtype).dml_name, fmt::join(t.sizes, ","),
                         fmt::join(t.strides, ","), t.total_bytes);
    };
    std::string k = fmt::format("{} inputs", input_count);
    for (const Node& n : nodes) {
      k += fmt::format("; {}", op_info(n.op.op).dml_operator_name());
      for (std::size_t a = 0; a < n.args.size(); ++a)
        k += fmt::format(" {}{}: {},", n.args[a].from_node ? "node " : "input ", n.args[a].index,
                         tensor(n.op.inputs[a]));
      k += " -> " + tensor(n.op.output);
    }
    return k;
  }
};

// ---- the process's devices -------------------------------------------------------------------

struct Phases {
  double compile = 0, initialize = 0, upload = 0, dispatch = 0, readback = 0;
};

// One per adapter: DirectML's objects on the d3d12 backend's device for that adapter.
class Context {
 public:
  // The context on the adapter `adapter_spec` chooses (d3d12::shared_device: "" is the
  // default), created on first use; *created_seconds is the time that took, device included
  // when it was created now. Throws Errc::backend, or Errc::usage for a spec naming no adapter.
  static Context& get(std::string_view adapter_spec, double* created_seconds);

  // The shared device's mutex (d3d12_device.hpp): guards this context's state and the queue,
  // held for a whole run as the d3d12 backend holds it; every submission is waited for, so the
  // queue is idle whenever it is released.
  std::mutex& mutex() { return *shared_.mutex; }
  const std::string& adapter() const { return adapter_; }
  // Under mutex(): the DirectML device created with `level` as its minimum.
  dml::IDMLDevice* dml_device(FeatureLevel level, double* created_seconds);
  // Under mutex(): the compiled, initialized operator of this shape on `level`'s device.
  Compiled& compiled(FeatureLevel level, const OperatorShape& shape, Phases& phases);
  // Under mutex(): the compiled (IDMLDevice1::CompileGraph), initialized graph of this shape.
  Compiled& compiled_graph(FeatureLevel level, const GraphShape& shape, Phases& phases);
  // Under mutex(): one dispatch of `c`: uploads[i] into input i (padded with zeros to
  // in_bytes[i]; a graph's inputs in GraphInputIndex order), the output's first out.size()
  // bytes read back.
  void dispatch(FeatureLevel level, Compiled& c, const std::vector<std::span<const std::byte>>& uploads,
                const std::vector<std::uint64_t>& in_bytes, std::uint64_t out_bytes, std::span<std::byte> out,
                Phases& phases);

 private:
  explicit Context(d3d12::SharedDevice shared);
  // d3d12_buffer.hpp's, on this context's device and list. DirectML binds every buffer as an
  // unordered-access view, so default-heap buffers allow unordered access.
  void ensure(Buffer& b, D3D12_HEAP_TYPE heap, std::uint64_t bytes, D3D12_RESOURCE_STATES initial) {
    d3d12::ensure_buffer(device_, b, heap, bytes, initial, heap == D3D12_HEAP_TYPE_DEFAULT);
  }
  void transition(Buffer& b, D3D12_RESOURCE_STATES to) { d3d12::transition(list_.get(), b, to); }
  void begin_recording();  // resets the command list for a new submission
  void submit_and_wait();
  dml::IDMLCommandRecorder* recorder(FeatureLevel level);
  // Runs `c`'s initializer once and leaves `c` ready to bind: heap, binding table, persistent and
  // temporary buffers.
  void initialize(FeatureLevel level, Compiled& c, Phases& phases);

  d3d12::SharedDevice shared_;           // first: the device outlives everything made on it
  ID3D12Device* device_ = nullptr;       // shared_'s, not AddRef'd
  ID3D12CommandQueue* queue_ = nullptr;  // shared_'s, shared with the d3d12 backend
  std::string adapter_;
  Com<ID3D12CommandAllocator> allocator_;
  Com<ID3D12GraphicsCommandList> list_;
  std::uint64_t timestamp_frequency_ = 0;
  Com<ID3D12QueryHeap> queries_;
  Buffer query_readback_;
  std::map<int, Com<dml::IDMLDevice>> dml_devices_;
  std::map<int, Com<dml::IDMLCommandRecorder>> recorders_;
  std::map<int, std::map<OperatorShape, std::unique_ptr<Compiled>, ShapeLess>> compiled_;
  std::map<int, std::map<std::string, std::unique_ptr<Compiled>>> compiled_graphs_;  // by GraphShape::key()
  std::vector<Buffer> inputs_, uploads_;  // one per operator or graph input, grown as needed
  Buffer output_, readback_;
};

std::mutex context_mutex;

Context& Context::get(std::string_view adapter_spec, double* created_seconds) {
  // Never destroyed: their DirectML objects would be released at exit in no order we choose
  // relative to DirectML.dll's unloading (library()); the process's end frees them.
  static auto& contexts = *new std::map<unsigned, std::unique_ptr<Context>>();
  std::lock_guard lock(context_mutex);
  if (created_seconds) *created_seconds = 0;
  const Library& lib = library();
  if (!lib.error.empty()) throw Error(Errc::backend, lib.error);
  Stopwatch clock;
  d3d12::SharedDevice shared = d3d12::shared_device(adapter_spec);
  auto& slot = contexts[shared.adapter->index];
  if (!slot) {
    std::lock_guard device_lock(*shared.mutex);
    slot.reset(new Context(std::move(shared)));
    if (created_seconds) *created_seconds = clock.seconds();
  }
  return *slot;
}

Context::Context(d3d12::SharedDevice shared) : shared_(std::move(shared)) {
  device_ = shared_.device;
  queue_ = shared_.queue;
  const GpuAdapter& a = *shared_.adapter;
  adapter_ = fmt::format("{}, {} adapter {}", a.name, a.software ? "software" : "hardware", a.index);
  check_hresult(queue_->GetTimestampFrequency(&timestamp_frequency_), "GetTimestampFrequency");
  check_hresult(
      device_->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_DIRECT, iid<ID3D12CommandAllocator>(), allocator_.out()),
      "CreateCommandAllocator");
  check_hresult(device_->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT, allocator_.get(), nullptr,
                                           iid<ID3D12GraphicsCommandList>(), list_.out()),
                "CreateCommandList");
  check_hresult(list_->Close(), "ID3D12GraphicsCommandList::Close");
  D3D12_QUERY_HEAP_DESC qh{};
  qh.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
  qh.Count = 4;
  check_hresult(device_->CreateQueryHeap(&qh, iid<ID3D12QueryHeap>(), queries_.out()), "CreateQueryHeap");
  ensure(query_readback_, D3D12_HEAP_TYPE_READBACK, 4 * sizeof(std::uint64_t), D3D12_RESOURCE_STATE_COPY_DEST);
}

dml::IDMLDevice* Context::dml_device(FeatureLevel level, double* created_seconds) {
  if (created_seconds) *created_seconds = 0;
  auto& slot = dml_devices_[level.value()];
  if (!slot) {
    Stopwatch clock;
    check_hresult(library().create_device1(device_, dml::DML_CREATE_DEVICE_FLAG_NONE, level.value(),
                                           dml::IID_IDMLDevice, slot.out()),
                  "DMLCreateDevice1", fmt::format("(minimum feature level {})", level.enum_name()));
    if (created_seconds) *created_seconds = clock.seconds();
  }
  return slot.get();
}

dml::IDMLCommandRecorder* Context::recorder(FeatureLevel level) {
  auto& slot = recorders_[level.value()];
  if (!slot)
    check_hresult(dml_device(level, nullptr)->CreateCommandRecorder(dml::IID_IDMLCommandRecorder, slot.out()),
                  "IDMLDevice::CreateCommandRecorder");
  return slot.get();
}

void Context::begin_recording() {
  check_hresult(allocator_->Reset(), "ID3D12CommandAllocator::Reset");
  check_hresult(list_->Reset(allocator_.get(), nullptr), "ID3D12GraphicsCommandList::Reset");
}

// Submits the list and waits for it with the shared device's fence (d3d12_device.hpp), which
// leaves the shared queue idle.
void Context::submit_and_wait() {
  check_hresult(list_->Close(), "ID3D12GraphicsCommandList::Close");
  shared_.owner->execute(list_.get());
}

// A buffer binding, or none for a buffer of 0 bytes.
struct Binding {
  dml::DML_BUFFER_BINDING buffer{};
  dml::DML_BINDING_DESC desc{dml::DML_BINDING_TYPE_NONE, nullptr};
  Binding(const Buffer& b, std::uint64_t bytes) {
    if (bytes == 0) return;
    buffer = {b.resource.get(), 0, bytes};
    desc = {dml::DML_BINDING_TYPE_BUFFER, &buffer};
  }
  Binding(const Binding&) = delete;
  Binding& operator=(const Binding&) = delete;
};

Compiled& Context::compiled(FeatureLevel level, const OperatorShape& shape, Phases& phases) {
  auto& cache = compiled_[level.value()];
  if (auto it = cache.find(shape); it != cache.end()) return *it->second;
  dml::IDMLDevice* dev = dml_device(level, nullptr);
  auto c = std::make_unique<Compiled>();

  Stopwatch clock;
  const DmlDescs descs(shape);
  Com<dml::IDMLOperator> op;
  check_hresult(dev->CreateOperator(descs.get(), dml::IID_IDMLOperator, op.out()), "IDMLDevice::CreateOperator",
                "(" + describe(shape) + ")");
  check_hresult(
      dev->CompileOperator(op.get(), dml::DML_EXECUTION_FLAG_NONE, dml::IID_IDMLCompiledOperator, c->op.out()),
      "IDMLDevice::CompileOperator", "(" + describe(shape) + ")");
  phases.compile += clock.lap();
  initialize(level, *c, phases);
  return *cache.emplace(shape, std::move(c)).first->second;
}

Compiled& Context::compiled_graph(FeatureLevel level, const GraphShape& shape, Phases& phases) {
  auto& cache = compiled_graphs_[level.value()];
  std::string key = shape.key();
  if (auto it = cache.find(key); it != cache.end()) return *it->second;
  dml::IDMLDevice* dev = dml_device(level, nullptr);
  Com<dml::IDMLDevice1> dev1;
  check_hresult(dev->QueryInterface(dml::IID_IDMLDevice1, dev1.out()), "IDMLDevice::QueryInterface(IDMLDevice1)",
                "(graphs need DirectML 1.1 or later)");
  auto c = std::make_unique<Compiled>();

  Stopwatch clock;
  const std::size_t n = shape.nodes.size();
  std::vector<Com<dml::IDMLOperator>> ops(n);
  std::vector<dml::DML_OPERATOR_GRAPH_NODE_DESC> op_nodes(n);
  std::vector<dml::DML_GRAPH_NODE_DESC> nodes(n);
  // Reserved: the edge wrappers point into these.
  std::vector<dml::DML_INPUT_GRAPH_EDGE_DESC> input_edges;
  std::vector<dml::DML_INTERMEDIATE_GRAPH_EDGE_DESC> intermediate_edges;
  input_edges.reserve(2 * n);
  intermediate_edges.reserve(2 * n);
  for (std::size_t k = 0; k < n; ++k) {
    const GraphShape::Node& node = shape.nodes[k];
    const DmlDescs descs(node.op);
    check_hresult(dev->CreateOperator(descs.get(), dml::IID_IDMLOperator, ops[k].out()), "IDMLDevice::CreateOperator",
                  fmt::format("(graph node {}: {})", k, describe(node.op)));
    op_nodes[k] = {ops[k].get(), nullptr};
    nodes[k] = {dml::DML_GRAPH_NODE_TYPE_OPERATOR, &op_nodes[k]};
    for (std::size_t a = 0; a < node.args.size(); ++a) {
      const auto to = static_cast<UINT>(k), port = static_cast<UINT>(a);
      if (node.args[a].from_node) intermediate_edges.push_back({node.args[a].index, 0, to, port, nullptr});
      else input_edges.push_back({node.args[a].index, to, port, nullptr});
    }
  }
  std::vector<dml::DML_GRAPH_EDGE_DESC> inputs, intermediates;
  for (const auto& e : input_edges) inputs.push_back({dml::DML_GRAPH_EDGE_TYPE_INPUT, &e});
  for (const auto& e : intermediate_edges) intermediates.push_back({dml::DML_GRAPH_EDGE_TYPE_INTERMEDIATE, &e});
  const dml::DML_OUTPUT_GRAPH_EDGE_DESC output_edge{static_cast<UINT>(n - 1), 0, 0, nullptr};
  const dml::DML_GRAPH_EDGE_DESC output{dml::DML_GRAPH_EDGE_TYPE_OUTPUT, &output_edge};
  dml::DML_GRAPH_DESC gd{};
  gd.InputCount = shape.input_count;
  gd.OutputCount = 1;
  gd.NodeCount = static_cast<UINT>(n);
  gd.Nodes = nodes.data();
  gd.InputEdgeCount = static_cast<UINT>(inputs.size());
  gd.InputEdges = inputs.empty() ? nullptr : inputs.data();
  gd.OutputEdgeCount = 1;
  gd.OutputEdges = &output;
  gd.IntermediateEdgeCount = static_cast<UINT>(intermediates.size());
  gd.IntermediateEdges = intermediates.empty() ? nullptr : intermediates.data();
  check_hresult(dev1->CompileGraph(&gd, dml::DML_EXECUTION_FLAG_NONE, dml::IID_IDMLCompiledOperator, c->op.out()),
                "IDMLDevice1::CompileGraph", "(" + key + ")");
  phases.compile += clock.lap();
  initialize(level, *c, phases);
  return *cache.emplace(std::move(key), std::move(c)).first->second;
}

void Context::initialize(FeatureLevel level, Compiled& c, Phases& phases) {
  dml::IDMLDevice* dev = dml_device(level, nullptr);
  Stopwatch clock;
  // The initializer, run once: it fills the persistent resource, if the operator has one.
  Com<dml::IDMLOperatorInitializer> init;
  dml::IDMLCompiledOperator* ops[] = {c.op.get()};
  check_hresult(dev->CreateOperatorInitializer(1, ops, dml::IID_IDMLOperatorInitializer, init.out()),
                "IDMLDevice::CreateOperatorInitializer");
  dml::DML_BINDING_PROPERTIES op_props{}, init_props{};
  c.op->GetBindingProperties(&op_props);
  init->GetBindingProperties(&init_props);
  const UINT descriptors =
      std::max<UINT>(1, std::max(op_props.RequiredDescriptorCount, init_props.RequiredDescriptorCount));
  D3D12_DESCRIPTOR_HEAP_DESC hd{};
  hd.Type = D3D12_DESCRIPTOR_HEAP_TYPE_CBV_SRV_UAV;
  hd.NumDescriptors = descriptors;
  hd.Flags = D3D12_DESCRIPTOR_HEAP_FLAG_SHADER_VISIBLE;
  check_hresult(device_->CreateDescriptorHeap(&hd, iid<ID3D12DescriptorHeap>(), c.heap.out()), "CreateDescriptorHeap",
                fmt::format("({} descriptors)", descriptors));
  c.persistent_bytes = op_props.PersistentResourceSize;
  c.op_temporary_bytes = op_props.TemporaryResourceSize;
  c.temporary_bytes = std::max(op_props.TemporaryResourceSize, init_props.TemporaryResourceSize);
  if (c.persistent_bytes)
    ensure(c.persistent, D3D12_HEAP_TYPE_DEFAULT, c.persistent_bytes, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  if (c.temporary_bytes)
    ensure(c.temporary, D3D12_HEAP_TYPE_DEFAULT, c.temporary_bytes, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);

  dml::DML_BINDING_TABLE_DESC td{};
  td.Dispatchable = init.get();
  // DirectX-Headers declare these, for mingw, with Microsoft's convention for returned structures.
  c.heap->GetCPUDescriptorHandleForHeapStart(&td.CPUDescriptorHandle);
  c.heap->GetGPUDescriptorHandleForHeapStart(&td.GPUDescriptorHandle);
  td.SizeInDescriptors = descriptors;
  check_hresult(dev->CreateBindingTable(&td, dml::IID_IDMLBindingTable, c.table.out()),
                "IDMLDevice::CreateBindingTable");
  const Binding persistent(c.persistent, c.persistent_bytes);
  const Binding temporary(c.temporary, c.temporary_bytes);
  if (c.persistent_bytes) c.table->BindOutputs(1, &persistent.desc);
  if (init_props.TemporaryResourceSize) c.table->BindTemporaryResource(&temporary.desc);
  begin_recording();
  ID3D12DescriptorHeap* heaps[] = {c.heap.get()};
  list_->SetDescriptorHeaps(1, heaps);
  recorder(level)->RecordDispatch(list_.get(), init.get(), c.table.get());
  submit_and_wait();
  // The same table now binds the operator itself.
  td.Dispatchable = c.op.get();
  check_hresult(c.table->Reset(&td), "IDMLBindingTable::Reset");
  phases.initialize += clock.lap();
}

void Context::dispatch(FeatureLevel level, Compiled& c, const std::vector<std::span<const std::byte>>& uploads,
                       const std::vector<std::uint64_t>& in_bytes, std::uint64_t out_bytes, std::span<std::byte> out,
                       Phases& phases) {
  Stopwatch copy;
  if (inputs_.size() < uploads.size()) {
    inputs_.resize(uploads.size());
    uploads_.resize(uploads.size());
  }
  for (std::size_t i = 0; i < uploads.size(); ++i) {
    ensure(uploads_[i], D3D12_HEAP_TYPE_UPLOAD, in_bytes[i], D3D12_RESOURCE_STATE_GENERIC_READ);
    ensure(inputs_[i], D3D12_HEAP_TYPE_DEFAULT, in_bytes[i], D3D12_RESOURCE_STATE_COPY_DEST);
    std::memcpy(uploads_[i].mapped, uploads[i].data(), uploads[i].size());
    std::memset(uploads_[i].mapped + uploads[i].size(), 0, in_bytes[i] - uploads[i].size());
  }
  ensure(output_, D3D12_HEAP_TYPE_DEFAULT, out_bytes, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  ensure(readback_, D3D12_HEAP_TYPE_READBACK, out_bytes, D3D12_RESOURCE_STATE_COPY_DEST);
  const double cpu_upload = copy.lap();

  std::vector<std::unique_ptr<Binding>> in;
  std::vector<dml::DML_BINDING_DESC> in_descs;
  for (std::size_t i = 0; i < uploads.size(); ++i) {
    in.push_back(std::make_unique<Binding>(inputs_[i], in_bytes[i]));
    in_descs.push_back(in.back()->desc);
  }
  const Binding output(output_, out_bytes);
  const Binding persistent(c.persistent, c.persistent_bytes);
  const Binding temporary(c.temporary, c.temporary_bytes);
  c.table->BindInputs(static_cast<UINT>(in_descs.size()), in_descs.data());
  c.table->BindOutputs(1, &output.desc);
  if (c.persistent_bytes) c.table->BindPersistentResource(&persistent.desc);
  if (c.op_temporary_bytes) c.table->BindTemporaryResource(&temporary.desc);

  begin_recording();
  list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0);
  for (std::size_t i = 0; i < uploads.size(); ++i) {
    transition(inputs_[i], D3D12_RESOURCE_STATE_COPY_DEST);
    list_->CopyBufferRegion(inputs_[i].resource.get(), 0, uploads_[i].resource.get(), 0, in_bytes[i]);
    transition(inputs_[i], D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  }
  transition(output_, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 1);
  ID3D12DescriptorHeap* heaps[] = {c.heap.get()};
  list_->SetDescriptorHeaps(1, heaps);
  recorder(level)->RecordDispatch(list_.get(), c.op.get(), c.table.get());
  D3D12_RESOURCE_BARRIER uav{};
  uav.Type = D3D12_RESOURCE_BARRIER_TYPE_UAV;
  uav.UAV.pResource = nullptr;  // every unordered access
  list_->ResourceBarrier(1, &uav);
  list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 2);
  transition(output_, D3D12_RESOURCE_STATE_COPY_SOURCE);
  list_->CopyBufferRegion(readback_.resource.get(), 0, output_.resource.get(), 0, out_bytes);
  list_->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 3);
  list_->ResolveQueryData(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0, 4, query_readback_.resource.get(), 0);
  submit_and_wait();

  copy.lap();
  std::memcpy(out.data(), readback_.mapped, out.size());
  const double cpu_readback = copy.lap();
  std::uint64_t ts[4];
  std::memcpy(ts, query_readback_.mapped, sizeof ts);
  const double tick = timestamp_frequency_ ? 1.0 / static_cast<double>(timestamp_frequency_) : 0;
  const auto span = [&](int a, int b) { return ts[b] >= ts[a] ? static_cast<double>(ts[b] - ts[a]) * tick : 0.0; };
  phases.upload += cpu_upload + span(0, 1);
  phases.dispatch += span(1, 2);
  phases.readback += span(2, 3) + cpu_readback;
}

// The highest level `device` reports (CheckFeatureSupport with every level DirectML defines).
std::optional<FeatureLevel> max_feature_level(dml::IDMLDevice* device) {
  std::vector<dml::DML_FEATURE_LEVEL> levels;
  for (FeatureLevel l : feature_levels()) levels.push_back(l.value());
  dml::DML_FEATURE_QUERY_FEATURE_LEVELS query{static_cast<UINT>(levels.size()), levels.data()};
  dml::DML_FEATURE_DATA_FEATURE_LEVELS data{};
  if (FAILED(device->CheckFeatureSupport(dml::DML_FEATURE_FEATURE_LEVELS, sizeof query, &query, sizeof data, &data)))
    return std::nullopt;
  for (FeatureLevel l : feature_levels())
    if (l.value() == data.MaxSupportedFeatureLevel) return l;
  return std::nullopt;
}

}  // namespace
}  // namespace directml

// ---- the backend -------------------------------------------------------------------------------

bool directml_built() { return true; }

DirectmlInfo probe_directml() {
  DirectmlInfo info;
  info.built = true;
  const directml::Library& lib = directml::library();
  info.library = lib.name;
  info.path = lib.path;
  info.version = lib.version;
  if (!lib.error.empty()) {
    info.error = lib.error;
    return info;
  }
  info.found = true;
  try {
    directml::Context& c = directml::Context::get("", nullptr);
    std::lock_guard lock(c.mutex());
    info.adapter = c.adapter();
    info.max_feature_level = directml::max_feature_level(c.dml_device(feature_levels().front(), nullptr));
    if (!info.max_feature_level) info.error = "CheckFeatureSupport(DML_FEATURE_FEATURE_LEVELS) failed";
  } catch (const Error& e) {
    info.error = e.what();
  }
  return info;
}

struct DirectmlBackend::Impl {
  DirectmlBackendOptions options;
  directml::Context* context = nullptr;
  double device_seconds = 0;
  directml::Phases phases;
  std::uint64_t compiled_graph_runs = 0;
};

DirectmlBackend::DirectmlBackend(DirectmlBackendOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = options;
  impl_->options.max_buffer_bytes = std::clamp<std::uint64_t>(directml::max_buffer_bytes(options.max_buffer_bytes),
                                                              directml::kMinBufferBytes, directml::kMaxBufferBytes);
  try {
    impl_->context = &directml::Context::get(impl_->options.adapter, &impl_->device_seconds);
  } catch (const Error& e) {
    if (e.code() != Errc::backend) throw;
    throw Error(Errc::backend, fmt::format("the directml backend cannot run: {}", e.what()));
  }
}

DirectmlBackend::~DirectmlBackend() = default;

DeviceDescription DirectmlBackend::device_description() const {
  const directml::Library& lib = directml::library();
  return {.kind = DeviceKind::directml, .adapter = impl_->context->adapter(), .version = lib.version, .path = lib.path};
}

std::optional<std::string> DirectmlBackend::unsupported_reason(const ValidatedOp& op) const {
  return directml::unsupported_reason(op);
}

std::vector<PhaseTime> DirectmlBackend::detail_phases() const {
  const auto& p = impl_->phases;
  return {{"device", impl_->device_seconds}, {"compile", p.compile},
          {"initialize", p.initialize},      {"upload", p.upload},
          {"dispatch", p.dispatch},          {"readback", p.readback}};
}

void DirectmlBackend::run(const ValidatedOp& op, const ExecuteBuffers& buffers) {
  if (auto why = directml::unsupported_reason(op)) throw Error(Errc::unsupported, "directml: " + *why);
  const DmlOperatorDesc& d = op.desc();
  if (d.empty) return;
  const auto in_size = static_cast<std::uint64_t>(dtype_info(op.input_dtype()).size);
  const auto out_size = static_cast<std::uint64_t>(dtype_info(op.output_dtype()).size);
  const std::size_t rank = d.output.sizes.size();
  const std::uint64_t max_bytes = impl_->options.max_buffer_bytes;
  const std::uint64_t max_elems =
      std::max<std::uint64_t>(64, (max_bytes / std::max(in_size, out_size)) & ~std::uint64_t{63});
  const std::uint64_t total = d.output.element_count();
  // Elements each input spans: its buffer holds at least these (ExecuteBuffers' contract).
  for (std::size_t j = 0; j < d.inputs.size(); ++j) {
    std::uint64_t span = 1;
    for (std::size_t i = 0; i < rank; ++i) span += (d.output.sizes[i] - 1) * d.inputs[j].strides[i];
    if (buffers.inputs[j].size() < span * in_size)
      throw Error(Errc::internal, fmt::format("directml: input {} holds {} bytes, the operation reads {}", j,
                                              buffers.inputs[j].size(), span * in_size));
  }

  directml::Context& ctx = *impl_->context;
  std::lock_guard lock(ctx.mutex());
  double created = 0;
  ctx.dml_device(d.level, &created);
  impl_->device_seconds += created;

  const BoxGrid grid(d.output.sizes, total, max_elems);
  const bool whole = total <= max_elems;
  std::vector<std::uint64_t> index(rank, 0);
  std::uint64_t r = 0;
  do {
    r = std::min(grid.rows, d.output.sizes[grid.split] - index[grid.split]);
    directml::OperatorShape shape;
    shape.op = d.op;
    std::vector<std::uint64_t> sizes(rank);
    std::uint64_t count = 1;
    for (std::size_t i = 0; i < rank; ++i) {
      sizes[i] = whole ? d.output.sizes[i] : i < grid.split ? 1 : i == grid.split ? r : d.output.sizes[i];
      count *= sizes[i];
    }
    std::uint64_t out_offset = 0;
    for (std::size_t i = 0; i < rank; ++i) out_offset += index[i] * grid.out_strides[i];
    std::vector<std::span<const std::byte>> uploads;
    std::vector<std::uint64_t> in_bytes;
    for (std::size_t j = 0; j < d.inputs.size(); ++j) {
      DmlTensorDesc t = d.inputs[j];
      std::uint64_t start = 0;
      if (!whole) {
        t.sizes = sizes;
        for (std::size_t i = 0; i < rank; ++i) {
          start += index[i] * d.inputs[j].strides[i];
          if (sizes[i] == 1) t.strides[i] = 0;  // a fixed outer index: its stride may not fit 32 bits
        }
        t.total_bytes = calc_buffer_tensor_size(t.dtype, t.sizes, t.strides);
      }
      std::uint64_t extent = 1;
      for (std::size_t i = 0; i < rank; ++i) extent += (t.sizes[i] - 1) * t.strides[i];
      uploads.push_back(buffers.inputs[j].subspan(start * in_size, extent * in_size));
      in_bytes.push_back(std::max<std::uint64_t>(t.total_bytes, 4));
      shape.inputs.push_back(std::move(t));
    }
    shape.output = d.output;
    if (!whole) {
      shape.output.sizes = sizes;
      std::uint64_t s = 1;
      for (std::size_t i = rank; i-- > 0;) {
        shape.output.strides[i] = s;
        s *= sizes[i];
      }
      shape.output.total_bytes = calc_buffer_tensor_size(shape.output.dtype, sizes, shape.output.strides);
    }
    const std::uint64_t out_bytes = std::max<std::uint64_t>(shape.output.total_bytes, 4);
    directml::Compiled& c = ctx.compiled(d.level, shape, impl_->phases);
    ctx.dispatch(d.level, c, uploads, in_bytes, out_bytes,
                 buffers.output.subspan(out_offset * out_size, count * out_size), impl_->phases);
  } while (!whole && grid.advance(index, r));
}

std::uint64_t DirectmlBackend::compiled_graph_runs() const { return impl_->compiled_graph_runs; }

void DirectmlBackend::run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) {
  if (auto why = unsupported_graph_reason(graph)) throw Error(Errc::unsupported, "directml: " + *why);
  const auto nodes = graph.nodes();
  // One node is one operator: the single-operator path (run(), chunks included).
  if (nodes.size() == 1) return Backend::run_graph(graph, buffers);
  // A node with a size 0 makes every node that reads it empty, down to the output: nothing to do.
  if (graph.output_node().op.desc().empty) return;
  for (const GraphNode& n : nodes)
    if (n.op.desc().empty) return Backend::run_graph(graph, buffers);

  // The DirectML graph inputs: the inputs, then the constants, that some node reads.
  const std::size_t n_inputs = graph.inputs().size();
  std::vector<std::int64_t> slot(n_inputs + graph.constants().size(), -1);
  const auto value_slot = [&](const GraphValue& v) -> std::int64_t& {
    return slot[v.kind == GraphValue::Kind::input ? v.index : n_inputs + v.index];
  };
  for (const GraphNode& n : nodes)
    for (int a = 0; a < n.op.op().arity; ++a)
      if (n.args[static_cast<std::size_t>(a)].kind != GraphValue::Kind::node)
        value_slot(n.args[static_cast<std::size_t>(a)]) = 0;
  std::vector<std::span<const std::byte>> uploads;
  for (std::size_t i = 0; i < slot.size(); ++i) {
    if (slot[i] < 0) continue;
    const bool is_input = i < n_inputs;
    const std::span<const std::byte> data = is_input ? buffers.inputs[i] : buffers.constants[i - n_inputs];
    const OperandInfo info =
        is_input ? graph.inputs()[i]
                 : OperandInfo{graph.constants()[i - n_inputs].dtype, graph.constants()[i - n_inputs].shape};
    const std::uint64_t bytes = info.shape.element_count() * dtype_info(info.dtype).size;
    if (data.size() < bytes)
      throw Error(Errc::internal,
                  fmt::format("directml: graph {} {} holds {} bytes, not {}", is_input ? "input" : "constant",
                              is_input ? i : i - n_inputs, data.size(), bytes));
    slot[i] = static_cast<std::int64_t>(uploads.size());
    uploads.push_back(data.first(bytes));
  }
  // Each graph input's buffer holds what its largest reader declares (its readers of one packed
  // tensor declare the same, broadcast or not), at least 4 bytes.
  std::vector<std::uint64_t> in_bytes(uploads.size(), 4);
  directml::GraphShape shape;
  shape.input_count = static_cast<std::uint32_t>(uploads.size());
  std::uint64_t largest = 0;
  for (const GraphNode& n : nodes) {
    const DmlOperatorDesc& d = n.op.desc();
    directml::GraphShape::Node g{{d.op, d.inputs, d.output}, {}};
    for (std::size_t a = 0; a < d.inputs.size(); ++a) {
      const GraphValue& v = n.args[a];
      if (v.kind == GraphValue::Kind::node) {
        g.args.push_back({true, v.index});
        g.op.inputs[a].total_bytes = nodes[v.index].op.desc().output.total_bytes;
      } else {
        const auto s = static_cast<std::size_t>(value_slot(v));
        g.args.push_back({false, static_cast<std::uint32_t>(s)});
        in_bytes[s] = std::max(in_bytes[s], d.inputs[a].total_bytes);
      }
    }
    largest = std::max(largest, d.output.total_bytes);
    shape.nodes.push_back(std::move(g));
  }
  for (std::uint64_t b : in_bytes) largest = std::max(largest, b);
  // A graph past one buffer runs node by node, each node in chunks (run()).
  if (largest > impl_->options.max_buffer_bytes) return Backend::run_graph(graph, buffers);
  const std::uint64_t out_size = graph.output_bytes();
  if (buffers.output.size() < out_size)
    throw Error(Errc::internal,
                fmt::format("directml: the graph's output holds {} bytes, not {}", buffers.output.size(), out_size));

  directml::Context& ctx = *impl_->context;
  std::lock_guard lock(ctx.mutex());
  double created = 0;
  ctx.dml_device(graph.level(), &created);
  impl_->device_seconds += created;
  directml::Compiled& c = ctx.compiled_graph(graph.level(), shape, impl_->phases);
  ctx.dispatch(graph.level(), c, uploads, in_bytes,
               std::max<std::uint64_t>(graph.output_node().op.desc().output.total_bytes, 4),
               buffers.output.first(out_size), impl_->phases);
  ++impl_->compiled_graph_runs;
}

std::optional<std::string> directml_create_operator(const DmlOperatorDesc& desc, FeatureLevel level) {
  directml::Context& ctx = directml::Context::get("", nullptr);
  std::lock_guard lock(ctx.mutex());
  dml::IDMLDevice* dev = ctx.dml_device(level, nullptr);
  directml::OperatorShape shape{desc.op, desc.inputs, desc.output};
  const directml::DmlDescs descs(shape);
  directml::Com<dml::IDMLOperator> op;
  const HRESULT hr = dev->CreateOperator(descs.get(), dml::IID_IDMLOperator, op.out());
  if (SUCCEEDED(hr)) return std::nullopt;
  return "CreateOperator failed: " + d3d12::hresult_text(static_cast<std::int32_t>(hr));
}

}  // namespace dmlbits
