// The D3D12 calls: the library loaded with dlopen, the device, root signature, pipelines,
// buffers, and one dispatch with its copies, timestamps and fence wait.
#define INITGUID  // exactly one translation unit defines the IIDs vkd3d's headers declare
#include "d3d12_api.hpp"

#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "com.hpp"
#include "copy_team.hpp"
#include "d3d12_buffer.hpp"
#include "d3d12_runtime.hpp"
#include "dmlbits/error.hpp"
#include "memory.hpp"
#include "dmlbits/timing.hpp"
#include "dynamic_library.hpp"
#include "environment.hpp"
#include "foreign_allocations.hpp"
#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
#include "vulkan_loader.hpp"
#elif defined(_WIN32)
#include "dxgi_adapters.hpp"
#endif

namespace dmlbits {
namespace d3d12 {
namespace {

using d3d12api::iid_of;

// ---- errors --------------------------------------------------------------------------------

[[noreturn]] void fail(std::string_view call, HRESULT hr, std::string_view what = {}) {
  throw_hresult(call, static_cast<std::int32_t>(hr), what);
}

// ---- the library -----------------------------------------------------------------------------

struct Library {
  DynamicLibrary handle;
  std::string name;
  std::string error;
  PFN_D3D12_CREATE_DEVICE create_device = nullptr;
  decltype(&::D3D12SerializeRootSignature) serialize_root_signature = nullptr;
#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
  decltype(&::vkd3d_create_event) create_event = nullptr;
  decltype(&::vkd3d_wait_event) wait_event = nullptr;
  decltype(&::vkd3d_destroy_event) destroy_event = nullptr;
  // vkd3d's own device creation (libvkd3d.so.1, which libvkd3d-utils loads), to choose the
  // Vulkan physical device ourselves: see create_device below.
  decltype(&::vkd3d_signal_event) signal_event = nullptr;
  decltype(&::vkd3d_create_instance) create_instance = nullptr;
  decltype(&::vkd3d_instance_get_vk_instance) instance_get_vk_instance = nullptr;
  decltype(&::vkd3d_instance_decref) instance_decref = nullptr;
  decltype(&::vkd3d_create_device) create_vkd3d_device = nullptr;
#endif
};

// vkd3d writes fixme/err lines to standard error; they are noise for dmlbits' users unless
// they asked for them (VKD3D_DEBUG, VKD3D_SHADER_DEBUG). vkd3d 1.2 has no other way to quiet
// it than its environment, which it reads once, at its first message. Writing the environment
// races with any thread reading it (glibc's getenv does not lock), so the defaults are set
// here, during static initialisation, before main() and before any thread of the process
// exists, rather than when the library is first loaded, which `dmlbits check -j` does on a
// worker thread while others read DMLBITS_THREADS.
[[maybe_unused]] const bool vkd3d_quiet = [] {
  set_environment_default("VKD3D_DEBUG", "none");
  set_environment_default("VKD3D_SHADER_DEBUG", "none");
  return true;
}();

Library load() {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  Library lib;
  const std::string env = environment_variable(d3d12api::kLibraryVariable).value_or("");
  lib.name = !env.empty() ? env : d3d12api::kDefaultLibrary;
  lib.handle = DynamicLibrary::open(lib.name);
  if (!lib.handle.loaded()) {
    lib.error = lib.handle.error();
    return lib;
  }
  const auto sym = [&](const char* name) {
    void* p = lib.handle.symbol(name);
    if (!p && lib.error.empty()) lib.error = fmt::format("{}: no symbol {}", lib.name, name);
    return p;
  };
  lib.create_device = reinterpret_cast<PFN_D3D12_CREATE_DEVICE>(sym("D3D12CreateDevice"));
  lib.serialize_root_signature =
      reinterpret_cast<decltype(lib.serialize_root_signature)>(sym("D3D12SerializeRootSignature"));
#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
  lib.create_event = reinterpret_cast<decltype(lib.create_event)>(sym("vkd3d_create_event"));
  lib.wait_event = reinterpret_cast<decltype(lib.wait_event)>(sym("vkd3d_wait_event"));
  lib.destroy_event = reinterpret_cast<decltype(lib.destroy_event)>(sym("vkd3d_destroy_event"));
  lib.signal_event = reinterpret_cast<decltype(lib.signal_event)>(sym("vkd3d_signal_event"));
  lib.create_instance = reinterpret_cast<decltype(lib.create_instance)>(sym("vkd3d_create_instance"));
  lib.instance_get_vk_instance =
      reinterpret_cast<decltype(lib.instance_get_vk_instance)>(sym("vkd3d_instance_get_vk_instance"));
  lib.instance_decref = reinterpret_cast<decltype(lib.instance_decref)>(sym("vkd3d_instance_decref"));
  lib.create_vkd3d_device = reinterpret_cast<decltype(lib.create_vkd3d_device)>(sym("vkd3d_create_device"));
#endif
  return lib;
}

const Library& library() {
  static const Library lib = load();
  return lib;
}

// ---- buffers ---------------------------------------------------------------------------------

std::string_view heap_name(D3D12_HEAP_TYPE t) {
  return t == D3D12_HEAP_TYPE_UPLOAD ? "upload" : t == D3D12_HEAP_TYPE_READBACK ? "readback" : "default";
}

const char* feature_level_name(D3D_FEATURE_LEVEL l) {
  switch (static_cast<unsigned>(l)) {
    case 0x9100:
      return "9_1";
    case 0x9200:
      return "9_2";
    case 0x9300:
      return "9_3";
    case 0xa000:
      return "10_0";
    case 0xa100:
      return "10_1";
    case 0xb000:
      return "11_0";
    case 0xb100:
      return "11_1";
    case 0xc000:
      return "12_0";
    case 0xc100:
      return "12_1";
    case 0xc200:
      return "12_2";
    default:
      return "unknown";
  }
}

class DeviceImpl final : public Device {
 public:
  explicit DeviceImpl(const GpuAdapter& adapter);
  ~DeviceImpl() override;
  const D3d12DeviceInfo& info() const override { return info_; }
  ID3D12Device* native_device() const override { return device_.get(); }
  ID3D12CommandQueue* native_queue() const override { return queue_.get(); }
  void dispatch(const DispatchJob& job, PhaseSeconds& phases, CopyTeam* team) override;
  void stream(const StreamJob& job, StagedIo& io, PhaseSeconds& phases, CopyTeam* team) override;
  void execute(ID3D12CommandList* list) override;
  void create_pipeline(const std::vector<std::uint8_t>& bytecode, const std::string& what) override {
    (void)make_pipeline(bytecode, what);
  }

 private:
  Com<ID3D12PipelineState> make_pipeline(const std::vector<std::uint8_t>& code, const std::string& what,
                                         ID3D12RootSignature* root = nullptr);
  ID3D12PipelineState* pipeline(const gpu::KernelKey& key, PhaseSeconds& phases);
  ID3D12PipelineState* graph_pipeline(const gpu::GraphKernelKey& key, PhaseSeconds& phases);
  void ensure(Buffer& b, D3D12_HEAP_TYPE heap, std::uint64_t bytes, D3D12_RESOURCE_STATES initial, bool uav) {
    ensure_buffer(device_.get(), b, heap, bytes, initial, uav);
  }
  void wait_idle();
  // Waits until the fence has reached `value` (signalled by an earlier submission).
  void wait_for(std::uint64_t value);

  // Transfers move through kSlots rotating command lists, each with its own upload and readback
  // heap of up to a piece (DispatchJob::piece_bytes) per input: the CPU copies one piece into (or out of) a slot's
  // mapped heap while the GPU copies the previous slots' pieces across the bus, instead of the
  // whole of each in turn (issue #36: upload and readback at 8 GB/s on an H100 host). Three
  // slots: one the CPU fills, one the GPU copies, one waiting between them.
  static constexpr unsigned kSlots = kTransferSlots;
  struct Slot {
    Com<ID3D12CommandAllocator> allocator;
    Com<ID3D12GraphicsCommandList> list;
    Buffer upload, readback;
    std::uint64_t upload_used = 0;  // bytes of upload recorded in the open list
    std::uint64_t fence = 0;        // the value that marks its last submission done (0: none)
    bool recording = false;         // its list is open (Reset, not yet Closed)
    struct CopyOut {
      std::uint64_t at;         // in readback
      std::span<std::byte> to;  // in the job's output
    };
    std::vector<CopyOut> copy_out;  // after the fence: readback -> the job's output
    CopyTeam* team = nullptr;       // splits copy_out's copies (null: the calling thread)
    // A streamed run's piece (stream()): device buffers of its own, so that a slot's piece
    // never waits for another's, and the output elements its readback heap holds.
    Buffer in[2], out;
    std::uint64_t out_first = 0, out_count = 0;  // out_count 0: none
  };
  // Waits for the slot's last submission and copies its pieces out.
  void retire(Slot& slot);
  // The next slot, retired, its list open for recording.
  Slot& open_slot(ID3D12PipelineState* pso);
  void submit(Slot& slot, double& submit_seconds);
  // Leaves every slot idle with nothing to copy out and its list closed, whatever an earlier
  // dispatch that threw left behind (its output may be gone).
  void reset_slots();

  D3d12DeviceInfo info_;
  Com<ID3D12Device> device_;
  Com<ID3D12CommandQueue> queue_;
  Slot slots_[kSlots];
  unsigned next_slot_ = 0;
  Com<ID3D12Fence> fence_;
  std::uint64_t fence_value_ = 0;
  HANDLE event_ = nullptr;
  Com<ID3D12RootSignature> root_signature_;
  Com<ID3D12QueryHeap> queries_;
  Buffer query_readback_;
  std::map<gpu::KernelKey, Com<ID3D12PipelineState>> pipelines_;
  // Graph kernels: eight SRVs (gpu::kGraphMaxBuffers), their pipelines built once per shape.
  Com<ID3D12RootSignature> graph_root_signature_;
  std::map<gpu::GraphKernelKey, Com<ID3D12PipelineState>> graph_pipelines_;
  Buffer inputs_[gpu::kGraphMaxBuffers], output_;
};

void query_features(ID3D12Device* device, D3d12DeviceInfo& info) {
  const D3D_FEATURE_LEVEL levels[] = {D3D_FEATURE_LEVEL_11_0, D3D_FEATURE_LEVEL_11_1, D3D_FEATURE_LEVEL_12_0,
                                      D3D_FEATURE_LEVEL_12_1};
  D3D12_FEATURE_DATA_FEATURE_LEVELS fl{};
  fl.NumFeatureLevels = sizeof(levels) / sizeof(levels[0]);
  fl.pFeatureLevelsRequested = levels;
  info.feature_level = SUCCEEDED(device->CheckFeatureSupport(D3D12_FEATURE_FEATURE_LEVELS, &fl, sizeof(fl)))
                           ? feature_level_name(fl.MaxSupportedFeatureLevel)
                           : "unknown";
  // Ask for the highest model first; a runtime that does not know a model refuses it with
  // E_INVALIDARG, so walk down to one it knows.
  info.shader_model = "unknown";
  for (unsigned sm : {0x69u, 0x68u, 0x67u, 0x66u, 0x65u, 0x64u, 0x63u, 0x62u, 0x61u, 0x60u, 0x51u}) {
    D3D12_FEATURE_DATA_SHADER_MODEL m{};
    m.HighestShaderModel = static_cast<D3D_SHADER_MODEL>(sm);
    if (SUCCEEDED(device->CheckFeatureSupport(D3D12_FEATURE_SHADER_MODEL, &m, sizeof(m)))) {
      const auto got = static_cast<unsigned>(m.HighestShaderModel);
      info.shader_model = fmt::format("{}.{}", got >> 4, got & 0xf);
      break;
    }
  }
  D3D12_FEATURE_DATA_ARCHITECTURE arch{};
  if (SUCCEEDED(device->CheckFeatureSupport(D3D12_FEATURE_ARCHITECTURE, &arch, sizeof(arch)))) {
    info.uma = arch.UMA;
    info.cache_coherent_uma = arch.CacheCoherentUMA;
  }
}

#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
// The device on `adapter`, whose index is its place in the Vulkan loader's list of physical
// devices (vulkan_adapters.cpp). libvkd3d-utils' D3D12CreateDevice ignores its adapter argument
// and lets vkd3d pick the device from the environment variable VKD3D_VULKAN_DEVICE, which
// dmlbits used to set around the call; but setenv races with getenv on other threads (`dmlbits
// check -j` creates devices while other cases read the environment), and a lock of ours cannot
// cover vkd3d's and the Vulkan loader's own getenv calls. So this does what D3D12CreateDevice
// does, with the same instance and device extensions, but creates the vkd3d instance first,
// lists its physical devices and passes the chosen one in vkd3d_device_create_info
// (vk_physical_device), which vkd3d uses instead of choosing. A user's VKD3D_VULKAN_DEVICE
// still picks the default adapter (default_adapter). Failures are reported as
// D3D12CreateDevice's, the call this stands for.
// D3D12_ERROR_ADAPTER_NOT_FOUND, which vkd3d's headers do not define.
constexpr HRESULT kAdapterNotFound = static_cast<HRESULT>(0x887E0001u);

HRESULT create_device(const Library& lib, const GpuAdapter& adapter, Com<ID3D12Device>& device) {
  const VulkanLoader& loader = vulkan_loader();
  if (!loader.get_instance_proc_addr) return kAdapterNotFound;
  static const char* const kInstanceExtensions[] = {VK_KHR_SURFACE_EXTENSION_NAME};
  static const char* const kOptionalInstanceExtensions[] = {"VK_KHR_xcb_surface", "VK_MVK_macos_surface"};
  static const char* const kDeviceExtensions[] = {VK_KHR_SWAPCHAIN_EXTENSION_NAME};
  vkd3d_application_info application{};
  application.type = VKD3D_STRUCTURE_TYPE_APPLICATION_INFO;
  application.api_version = VKD3D_API_VERSION_1_0;
  vkd3d_optional_instance_extensions_info optional{};
  optional.type = VKD3D_STRUCTURE_TYPE_OPTIONAL_INSTANCE_EXTENSIONS_INFO;
  optional.next = &application;
  optional.extensions = kOptionalInstanceExtensions;
  optional.extension_count = 2;
  vkd3d_instance_create_info instance_info{};
  instance_info.type = VKD3D_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  instance_info.next = &optional;
  instance_info.pfn_signal_event = lib.signal_event;
  instance_info.wchar_size = sizeof(WCHAR);
  instance_info.pfn_vkGetInstanceProcAddr = loader.get_instance_proc_addr;  // the loader that listed the adapters
  instance_info.instance_extensions = kInstanceExtensions;
  instance_info.instance_extension_count = 1;
  vkd3d_instance* instance = nullptr;
  if (const HRESULT hr = lib.create_instance(&instance_info, &instance); FAILED(hr)) return hr;
  struct Release {
    const Library& lib;
    vkd3d_instance* instance;
    ~Release() { lib.instance_decref(instance); }  // the device keeps its own reference
  } release{lib, instance};
  const VkInstance vk_instance = lib.instance_get_vk_instance(instance);
  const auto list = reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(
      loader.get_instance_proc_addr(vk_instance, "vkEnumeratePhysicalDevices"));
  std::uint32_t count = 0;
  if (!list || list(vk_instance, &count, nullptr) != VK_SUCCESS) return kAdapterNotFound;
  std::vector<VkPhysicalDevice> devices(count);
  if (list(vk_instance, &count, devices.data()) < 0) return kAdapterNotFound;
  devices.resize(count);
  if (adapter.index >= devices.size()) return kAdapterNotFound;
  vkd3d_device_create_info device_info{};
  device_info.type = VKD3D_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  device_info.minimum_feature_level = D3D_FEATURE_LEVEL_11_0;
  device_info.instance = instance;
  device_info.vk_physical_device = devices[adapter.index];
  device_info.device_extensions = kDeviceExtensions;
  device_info.device_extension_count = 1;
  return lib.create_vkd3d_device(&device_info, iid_of<ID3D12Device>(), device.out());
}
#elif defined(_WIN32)
// Windows' d3d12.dll: the device on the DXGI adapter that gpu_adapters() listed at this index.
HRESULT create_device(const Library& lib, const GpuAdapter& adapter, Com<ID3D12Device>& device) {
  IDXGIAdapter1* dxgi = d3d12_detail::dxgi_adapter(adapter.index);
  if (!dxgi) return static_cast<HRESULT>(0x887E0001u);  // D3D12_ERROR_ADAPTER_NOT_FOUND
  return lib.create_device(dxgi, D3D_FEATURE_LEVEL_11_0, iid_of<ID3D12Device>(), device.out());
}
#else
// WSL's libd3d12.so: the default adapter (WSL has no DXGI to choose one with).
HRESULT create_device(const Library& lib, const GpuAdapter&, Com<ID3D12Device>& device) {
  return lib.create_device(nullptr, D3D_FEATURE_LEVEL_11_0, iid_of<ID3D12Device>(), device.out());
}
#endif

DeviceImpl::DeviceImpl(const GpuAdapter& adapter) {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  const Library& lib = library();
  if (!lib.error.empty()) throw Error(Errc::backend, fmt::format("no D3D12 runtime: {}", lib.error));
  info_.adapter = adapter;
  Stopwatch clock;
  check_hresult(create_device(lib, adapter, device_), "D3D12CreateDevice",
                fmt::format("(adapter {} {})", adapter.index, adapter.name));
  query_features(device_.get(), info_);

  D3D12_COMMAND_QUEUE_DESC qd{};
  qd.Type = D3D12_COMMAND_LIST_TYPE_DIRECT;
  check_hresult(device_->CreateCommandQueue(&qd, iid_of<ID3D12CommandQueue>(), queue_.out()), "CreateCommandQueue");
  check_hresult(queue_->GetTimestampFrequency(&info_.timestamp_frequency), "GetTimestampFrequency");
  for (Slot& slot : slots_) {
    check_hresult(device_->CreateCommandAllocator(D3D12_COMMAND_LIST_TYPE_DIRECT, iid_of<ID3D12CommandAllocator>(),
                                                  slot.allocator.out()),
                  "CreateCommandAllocator");
    check_hresult(device_->CreateCommandList(0, D3D12_COMMAND_LIST_TYPE_DIRECT, slot.allocator.get(), nullptr,
                                             iid_of<ID3D12GraphicsCommandList>(), slot.list.out()),
                  "CreateCommandList");
    check_hresult(slot.list->Close(), "ID3D12GraphicsCommandList::Close");
  }
  check_hresult(device_->CreateFence(0, D3D12_FENCE_FLAG_NONE, iid_of<ID3D12Fence>(), fence_.out()), "CreateFence");
#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
  event_ = lib.create_event();
  if (!event_) throw Error(Errc::backend, "vkd3d_create_event failed");
#endif

  // The root signature of every kernel (gpu_kernel.hpp): 28 root constants at b0, then raw
  // buffers as root descriptors: SRVs t0 and t1, UAV u0. Root descriptors need no descriptor
  // heap; vkd3d maps them to Vulkan push descriptors. Graph kernels (graph_kernel.hpp) take the
  // same with SRVs t0..t7: 46 of the 64 root signature words.
  const auto make_root_signature = [&](unsigned srvs, Com<ID3D12RootSignature>& out) {
    D3D12_ROOT_PARAMETER params[2 + gpu::kGraphMaxBuffers]{};
    params[0].ParameterType = D3D12_ROOT_PARAMETER_TYPE_32BIT_CONSTANTS;
    params[0].Constants.ShaderRegister = 0;
    params[0].Constants.RegisterSpace = 0;
    params[0].Constants.Num32BitValues = gpu::kConstantWords;
    for (unsigned t = 0; t < srvs; ++t) {
      params[1 + t].ParameterType = D3D12_ROOT_PARAMETER_TYPE_SRV;
      params[1 + t].Descriptor.ShaderRegister = t;
    }
    params[1 + srvs].ParameterType = D3D12_ROOT_PARAMETER_TYPE_UAV;
    params[1 + srvs].Descriptor.ShaderRegister = 0;
    for (auto& p : params) p.ShaderVisibility = D3D12_SHADER_VISIBILITY_ALL;
    D3D12_ROOT_SIGNATURE_DESC rsd{};
    rsd.NumParameters = 2 + srvs;
    rsd.pParameters = params;
    rsd.Flags = D3D12_ROOT_SIGNATURE_FLAG_NONE;
    Com<ID3DBlob> blob, error_blob;
    const HRESULT shr =
        lib.serialize_root_signature(&rsd, D3D_ROOT_SIGNATURE_VERSION_1, reinterpret_cast<ID3DBlob**>(blob.out()),
                                     reinterpret_cast<ID3DBlob**>(error_blob.out()));
    if (FAILED(shr)) {
      std::string msg;
      if (error_blob) msg.assign(static_cast<const char*>(error_blob->GetBufferPointer()), error_blob->GetBufferSize());
      fail("D3D12SerializeRootSignature", shr, msg);
    }
    check_hresult(device_->CreateRootSignature(0, blob->GetBufferPointer(), blob->GetBufferSize(),
                                               iid_of<ID3D12RootSignature>(), out.out()),
                  "CreateRootSignature");
  };
  make_root_signature(2, root_signature_);
  make_root_signature(gpu::kGraphMaxBuffers, graph_root_signature_);

  D3D12_QUERY_HEAP_DESC qh{};
  qh.Type = D3D12_QUERY_HEAP_TYPE_TIMESTAMP;
  qh.Count = 2 * kSlots;  // two per slot: a streamed run times each slot's dispatch
  check_hresult(device_->CreateQueryHeap(&qh, iid_of<ID3D12QueryHeap>(), queries_.out()), "CreateQueryHeap");
  ensure(query_readback_, D3D12_HEAP_TYPE_READBACK, 2 * kSlots * sizeof(std::uint64_t), D3D12_RESOURCE_STATE_COPY_DEST,
         false);
  info_.creation_seconds = clock.seconds();
}

DeviceImpl::~DeviceImpl() {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  // Nothing may still run on buffers about to be released.
  if (fence_ && queue_) {
    try {
      wait_idle();
    } catch (...) {
    }
  }
#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
  if (event_) library().destroy_event(event_);
#endif
}

void DeviceImpl::wait_idle() {
  ++fence_value_;
  check_hresult(queue_->Signal(fence_.get(), fence_value_), "ID3D12CommandQueue::Signal");
  wait_for(fence_value_);
}

void DeviceImpl::wait_for(std::uint64_t value) {
  if (fence_->GetCompletedValue() >= value) return;
#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
  check_hresult(fence_->SetEventOnCompletion(value, event_), "ID3D12Fence::SetEventOnCompletion");
  library().wait_event(event_, VKD3D_INFINITE);
#else
  check_hresult(fence_->SetEventOnCompletion(value, nullptr), "ID3D12Fence::SetEventOnCompletion");
#endif
  if (fence_->GetCompletedValue() < value) {
    const HRESULT reason = device_->GetDeviceRemovedReason();
    fail("waiting for the GPU", FAILED(reason) ? reason : E_FAIL, "(the device stopped)");
  }
}

void DeviceImpl::execute(ID3D12CommandList* list) {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  queue_->ExecuteCommandLists(1, &list);
  wait_idle();
}

}  // namespace

void ensure_buffer(ID3D12Device* device, Buffer& b, D3D12_HEAP_TYPE heap, std::uint64_t bytes,
                   D3D12_RESOURCE_STATES initial, bool uav) {
  if (b.resource && b.capacity >= bytes) return;
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  b = Buffer{};
  std::uint64_t capacity = std::max<std::uint64_t>(bytes, 256);
  if (capacity > (1u << 20)) capacity = (capacity + (1u << 20) - 1) & ~std::uint64_t{(1u << 20) - 1};
  D3D12_HEAP_PROPERTIES hp{};
  hp.Type = heap;
  D3D12_RESOURCE_DESC rd{};
  rd.Dimension = D3D12_RESOURCE_DIMENSION_BUFFER;
  rd.Width = capacity;
  rd.Height = 1;
  rd.DepthOrArraySize = 1;
  rd.MipLevels = 1;
  rd.Format = DXGI_FORMAT_UNKNOWN;
  rd.SampleDesc.Count = 1;
  rd.Layout = D3D12_TEXTURE_LAYOUT_ROW_MAJOR;
  rd.Flags = uav ? D3D12_RESOURCE_FLAG_ALLOW_UNORDERED_ACCESS : D3D12_RESOURCE_FLAG_NONE;
  check_hresult(device->CreateCommittedResource(&hp, D3D12_HEAP_FLAG_NONE, &rd, initial, nullptr,
                                                iid_of<ID3D12Resource>(), b.resource.out()),
                "CreateCommittedResource", fmt::format("({} buffer of {} bytes)", heap_name(heap), capacity));
  b.capacity = capacity;
  b.state = initial;
  b.address = b.resource->GetGPUVirtualAddress();
  if (heap != D3D12_HEAP_TYPE_DEFAULT) {
    void* p = nullptr;
    check_hresult(b.resource->Map(0, nullptr, &p), "ID3D12Resource::Map");
    b.mapped = static_cast<std::byte*>(p);
    // Upload and readback heaps are host memory that each run copies whole; fresh 4 KiB pages
    // would make the first run's copies several times slower than the next runs'.
    advise_mapped_buffer(b.mapped, static_cast<std::size_t>(capacity));
  }
}

void transition(ID3D12GraphicsCommandList* list, Buffer& b, D3D12_RESOURCE_STATES to) {
  if (b.state == to) return;
  D3D12_RESOURCE_BARRIER barrier{};
  barrier.Type = D3D12_RESOURCE_BARRIER_TYPE_TRANSITION;
  barrier.Transition.pResource = b.resource.get();
  barrier.Transition.Subresource = D3D12_RESOURCE_BARRIER_ALL_SUBRESOURCES;
  barrier.Transition.StateBefore = b.state;
  barrier.Transition.StateAfter = to;
  list->ResourceBarrier(1, &barrier);
  b.state = to;
}

namespace {

ID3D12PipelineState* DeviceImpl::graph_pipeline(const gpu::GraphKernelKey& key, PhaseSeconds& phases) {
  if (auto it = graph_pipelines_.find(key); it != graph_pipelines_.end()) return it->second.get();
  Stopwatch clock;
  Com<ID3D12PipelineState> pso =
      make_pipeline(gpu::build_graph_kernel(key), "kernel " + gpu::to_string(key), graph_root_signature_.get());
  phases.pipeline += clock.seconds();
  return graph_pipelines_.emplace(key, std::move(pso)).first->second.get();
}

ID3D12PipelineState* DeviceImpl::pipeline(const gpu::KernelKey& key, PhaseSeconds& phases) {
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second.get();
  Stopwatch clock;
  Com<ID3D12PipelineState> pso = make_pipeline(kernel_bytecode(key), "kernel " + gpu::to_string(key));
  phases.pipeline += clock.seconds();
  return pipelines_.emplace(key, std::move(pso)).first->second.get();
}

Com<ID3D12PipelineState> DeviceImpl::make_pipeline(const std::vector<std::uint8_t>& code, const std::string& what,
                                                   ID3D12RootSignature* root) {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  D3D12_COMPUTE_PIPELINE_STATE_DESC pd{};
  pd.pRootSignature = root ? root : root_signature_.get();
  pd.CS.pShaderBytecode = code.data();
  pd.CS.BytecodeLength = code.size();
  Com<ID3D12PipelineState> pso;
  check_hresult(device_->CreateComputePipelineState(&pd, iid_of<ID3D12PipelineState>(), pso.out()),
                "CreateComputePipelineState", "(" + what + ")");
  return pso;
}

// Copies n bytes from `from` to `to`, split over `team` when it has several threads and the
// copy is large enough (CopyTeam::split).
void copy_bytes(std::byte* to, const std::byte* from, std::uint64_t n, CopyTeam* team) {
  if (!team) {
    std::memcpy(to, from, n);
    return;
  }
  team->split(n, 4096, [&](std::uint64_t at, std::uint64_t len) { std::memcpy(to + at, from + at, len); });
}

void DeviceImpl::retire(Slot& slot) {
  if (slot.fence) wait_for(slot.fence);
  slot.fence = 0;
  for (const auto& c : slot.copy_out) copy_bytes(c.to.data(), slot.readback.mapped + c.at, c.to.size(), slot.team);
  slot.copy_out.clear();
}

DeviceImpl::Slot& DeviceImpl::open_slot(ID3D12PipelineState* pso) {
  Slot& slot = slots_[next_slot_];
  next_slot_ = (next_slot_ + 1) % kSlots;
  retire(slot);
  slot.upload_used = 0;
  check_hresult(slot.allocator->Reset(), "ID3D12CommandAllocator::Reset");
  check_hresult(slot.list->Reset(slot.allocator.get(), pso), "ID3D12GraphicsCommandList::Reset");
  slot.recording = true;
  return slot;
}

void DeviceImpl::submit(Slot& slot, double& submit_seconds) {
  Stopwatch clock;
  slot.recording = false;
  check_hresult(slot.list->Close(), "ID3D12GraphicsCommandList::Close");
  ID3D12CommandList* list = slot.list.get();
  queue_->ExecuteCommandLists(1, &list);
  ++fence_value_;
  check_hresult(queue_->Signal(fence_.get(), fence_value_), "ID3D12CommandQueue::Signal");
  slot.fence = fence_value_;
  submit_seconds += clock.seconds();
}

void DeviceImpl::reset_slots() {
  // Every dispatch starts at slot 0: one that fits one submission (the small chunks of a
  // streamed run, `check`'s cases) reuses the same heaps each time instead of warming three.
  next_slot_ = 0;
  for (Slot& slot : slots_) {
    slot.copy_out.clear();
    slot.out_count = 0;
    if (slot.fence) wait_for(slot.fence);
    slot.fence = 0;
    if (slot.recording) (void)slot.list->Close();
    slot.recording = false;
  }
}

// One dispatch in three stages on one queue, in order:
//   upload    each input cut into pieces of job.piece_bytes; every piece but an input's last is
//             copied by the CPU into a slot's upload heap and submitted on its own, so the GPU
//             copies piece k to the device buffer while the CPU writes piece k + 1
//   dispatch  the inputs' last pieces, the Dispatch (between two timestamps) and the first
//             piece of the output's readback, in one submission (a run that fits one piece per
//             buffer is one submission, as small streamed chunks are)
//   readback  the output's other pieces, each copied by the GPU into a slot's readback heap
//             while the CPU copies the previous one out
// It returns when the whole output is in job.output. The device buffers are shared by the
// stages, which the queue runs in order; a slot's heaps are reused only after its fence.
void DeviceImpl::dispatch(const DispatchJob& job, PhaseSeconds& phases, CopyTeam* team) {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  ID3D12PipelineState* pso = job.graph ? graph_pipeline(*job.graph, phases) : pipeline(job.key, phases);
  reset_slots();
  for (Slot& slot : slots_) slot.team = team;
  // Pieces of whole padding units, so that only an input's last piece is padded.
  const std::uint64_t piece_bytes =
      std::max<std::uint64_t>(job.piece_bytes / gpu::kInputPaddingBytes, 1) * gpu::kInputPaddingBytes;
  Stopwatch wall;
  double submit_seconds = 0;
  // Inputs are padded with zeros to whole units of the widest packed kernel (gpu_kernel.hpp).
  const auto padded = [](std::uint64_t n) {
    return (n + gpu::kInputPaddingBytes - 1) / gpu::kInputPaddingBytes * gpu::kInputPaddingBytes;
  };
  for (unsigned i = 0; i < job.inputs; ++i) {
    const auto& in = job.input[i];
    if (!in.keep)
      ensure(inputs_[i], D3D12_HEAP_TYPE_DEFAULT, padded(in.upload.size()), D3D12_RESOURCE_STATE_COPY_DEST, false);
  }
  // A graph kernel of scalars alone reads no buffer, but every root SRV is bound to one.
  if (job.inputs == 0) ensure(inputs_[0], D3D12_HEAP_TYPE_DEFAULT, 256, D3D12_RESOURCE_STATE_COPY_DEST, false);
  ensure(output_, D3D12_HEAP_TYPE_DEFAULT, job.output_buffer_bytes, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, true);

  // Copies bytes [at, at + n) of input i into the slot's upload heap and records their copy to
  // the device buffer; the input's last piece is padded. The heap was made large enough for all
  // the slot's pieces when it was opened: replacing it now would release a buffer that the list
  // already copies from.
  const auto upload_piece = [&](Slot& slot, unsigned i, std::uint64_t at, std::uint64_t n) {
    const auto& data = job.input[i].upload;
    const std::uint64_t bytes = padded(n);
    if (slot.upload_used + bytes > slot.upload.capacity) throw Error(Errc::internal, "d3d12: upload heap overrun");
    copy_bytes(slot.upload.mapped + slot.upload_used, data.data() + at, n, team);
    std::memset(slot.upload.mapped + slot.upload_used + n, 0, bytes - n);
    d3d12::transition(slot.list.get(), inputs_[i], D3D12_RESOURCE_STATE_COPY_DEST);
    slot.list->CopyBufferRegion(inputs_[i].resource.get(), at, slot.upload.resource.get(), slot.upload_used, bytes);
    slot.upload_used += bytes;
  };
  // Records the copy of output bytes [at, at + n) into the slot's readback heap, to be copied
  // into job.output once the slot's fence has passed.
  const std::uint64_t out_bytes = job.output.size();
  const auto readback_piece = [&](Slot& slot, std::uint64_t at) {
    const std::uint64_t n = std::min(piece_bytes, out_bytes - at);
    const std::uint64_t words = (n + 3) & ~std::uint64_t{3};  // within u0, whose size is whole units
    ensure(slot.readback, D3D12_HEAP_TYPE_READBACK, words, D3D12_RESOURCE_STATE_COPY_DEST, false);
    slot.list->CopyBufferRegion(slot.readback.resource.get(), 0, output_.resource.get(), at, words);
    slot.copy_out.push_back({0, job.output.subspan(at, n)});
  };

  // Upload: every piece but the last of each input.
  std::array<std::uint64_t, gpu::kGraphMaxBuffers> last{};  // where each input's last piece starts
  for (unsigned i = 0; i < job.inputs; ++i) {
    const auto& in = job.input[i];
    if (in.keep) continue;
    const std::uint64_t size = in.upload.size();
    last[i] = size > piece_bytes ? (size - 1) / piece_bytes * piece_bytes : 0;
    for (std::uint64_t at = 0; at < last[i]; at += piece_bytes) {
      Slot& slot = open_slot(pso);
      ensure(slot.upload, D3D12_HEAP_TYPE_UPLOAD, piece_bytes, D3D12_RESOURCE_STATE_GENERIC_READ, false);
      upload_piece(slot, i, at, piece_bytes);
      submit(slot, submit_seconds);
    }
  }
  // Dispatch, with the inputs' last pieces and the output's first.
  Slot& slot = open_slot(pso);
  std::uint64_t last_bytes = 0;
  for (unsigned i = 0; i < job.inputs; ++i)
    if (!job.input[i].keep) last_bytes += padded(job.input[i].upload.size() - last[i]);
  ensure(slot.upload, D3D12_HEAP_TYPE_UPLOAD, last_bytes, D3D12_RESOURCE_STATE_GENERIC_READ, false);
  for (unsigned i = 0; i < job.inputs; ++i) {
    const auto& in = job.input[i];
    if (!in.keep) upload_piece(slot, i, last[i], in.upload.size() - last[i]);
  }
  ID3D12GraphicsCommandList* list = slot.list.get();
  for (unsigned i = 0; i < job.inputs; ++i)
    d3d12::transition(list, inputs_[i], D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
  d3d12::transition(list, output_, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
  list->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0);
  if (job.graph) {
    // Slots past the graph's buffers repeat t0's: every root descriptor is set, none is read.
    list->SetComputeRootSignature(graph_root_signature_.get());
    list->SetComputeRoot32BitConstants(0, gpu::kConstantWords, &job.graph_constants, 0);
    for (unsigned t = 0; t < gpu::kGraphMaxBuffers; ++t)
      list->SetComputeRootShaderResourceView(1 + t, inputs_[t < job.inputs ? t : 0].address);
    list->SetComputeRootUnorderedAccessView(1 + gpu::kGraphMaxBuffers, output_.address);
  } else {
    list->SetComputeRootSignature(root_signature_.get());
    list->SetComputeRoot32BitConstants(0, gpu::kConstantWords, &job.constants, 0);
    list->SetComputeRootShaderResourceView(1, inputs_[0].address);
    list->SetComputeRootShaderResourceView(2, inputs_[job.inputs > 1 ? 1 : 0].address);
    list->SetComputeRootUnorderedAccessView(3, output_.address);
  }
  list->Dispatch(job.groups, 1, 1);
  list->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 1);
  list->ResolveQueryData(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 0, 2, query_readback_.resource.get(), 0);
  d3d12::transition(list, output_, D3D12_RESOURCE_STATE_COPY_SOURCE);
  if (out_bytes > 0) readback_piece(slot, 0);
  submit(slot, submit_seconds);
  const double upload_stage = wall.seconds(), upload_submits = submit_seconds;
  // Readback: the output's other pieces, then the slots still in flight.
  for (std::uint64_t at = piece_bytes; at < out_bytes; at += piece_bytes) {
    Slot& next = open_slot(pso);
    readback_piece(next, at);
    submit(next, submit_seconds);
  }
  for (unsigned i = 0; i < kSlots; ++i) retire(slots_[(next_slot_ + i) % kSlots]);

  std::uint64_t ts[2];
  std::memcpy(ts, query_readback_.mapped, sizeof ts);
  const double tick = info_.timestamp_frequency ? 1.0 / static_cast<double>(info_.timestamp_frequency) : 0;
  const double gpu_dispatch = ts[1] >= ts[0] ? static_cast<double>(ts[1] - ts[0]) * tick : 0.0;
  // Wall time by stage, as the CPU sees it, less the submissions (submit): the upload stage
  // until the dispatch is submitted (the CPU's copies, its waits for slots), the readback stage
  // from there to the end less the Dispatch itself (waiting for the last pieces, the GPU's
  // copies, the CPU's copies out).
  const double total = wall.seconds();
  phases.upload += std::max(0.0, upload_stage - upload_submits);
  phases.dispatch += gpu_dispatch;
  phases.readback += std::max(0.0, total - upload_stage - gpu_dispatch - (submit_seconds - upload_submits));
  phases.submit += submit_seconds;
}

// A streamed run: piece p of the output (its first element p * piece_elements) on slot
// p % kSlots, each piece one submission of its own:
//   the CPU reads the inputs' elements through `io` straight into the slot's upload heap (for a
//   regular file, pread into the mapped heap: no buffer between),
//   the list copies them to the slot's device buffers, dispatches the kernel on them and copies
//   the result into the slot's readback heap,
//   and when the slot comes round again (or at the end) the CPU waits for its fence and writes
//   the result through `io` straight from the readback heap.
// So while the GPU copies and computes pieces p - 2 and p - 1, the CPU reads piece p and
// writes piece p - 3: the files' reads and writes, the bus and the kernels overlap, and no piece
// waits for a whole-run copy. Pieces are written in order, each after its fence.
void DeviceImpl::stream(const StreamJob& job, StagedIo& io, PhaseSeconds& phases, CopyTeam* team) {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  ID3D12PipelineState* pso = pipeline(job.key, phases);
  reset_slots();
  if (job.count == 0) return;
  Stopwatch wall;
  const std::uint64_t piece = job.piece_elements;
  const std::uint64_t pieces = (job.count + piece - 1) / piece;
  const auto padded = [](std::uint64_t n) {
    return (n + gpu::kInputPaddingBytes - 1) / gpu::kInputPaddingBytes * gpu::kInputPaddingBytes;
  };
  const auto in_bytes = [&](unsigned i, std::uint64_t n) { return padded((job.scalar[i] ? 1 : n) * job.in_size); };
  const auto out_words = [&](std::uint64_t n) { return (n * job.out_size + 3) & ~std::uint64_t{3}; };
  // Every slot a piece will use, sized for a whole piece before the first is recorded.
  const std::uint64_t full = std::min(piece, job.count);
  const std::uint64_t out_buffer =
      std::max<std::uint64_t>(gpu::output_units(job.key, static_cast<std::uint32_t>(full)), 1) *
      gpu::unit_bytes(job.key);
  std::uint64_t upload_bytes = 0;
  for (unsigned i = 0; i < job.inputs; ++i) upload_bytes += in_bytes(i, full);
  const unsigned in_flight = static_cast<unsigned>(std::clamp<std::uint64_t>(job.in_flight, 1, kSlots));
  const unsigned used = static_cast<unsigned>(std::min<std::uint64_t>(in_flight, pieces));
  for (unsigned k = 0; k < used; ++k) {
    Slot& slot = slots_[k];
    slot.team = nullptr;
    ensure(slot.upload, D3D12_HEAP_TYPE_UPLOAD, upload_bytes, D3D12_RESOURCE_STATE_GENERIC_READ, false);
    ensure(slot.readback, D3D12_HEAP_TYPE_READBACK, out_words(full), D3D12_RESOURCE_STATE_COPY_DEST, false);
    for (unsigned i = 0; i < job.inputs; ++i)
      ensure(slot.in[i], D3D12_HEAP_TYPE_DEFAULT, in_bytes(i, full), D3D12_RESOURCE_STATE_COPY_DEST, false);
    ensure(slot.out, D3D12_HEAP_TYPE_DEFAULT, out_buffer, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, true);
  }
  // Reads and writes split over the team where `io` allows it, each part whole elements on a
  // 4 KiB boundary of the piece (so no two threads share a page of the heap).
  const auto split = [&](bool concurrent, std::uint64_t bytes, std::uint64_t element,
                         const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
    if (!concurrent || !team) {
      fn(0, bytes);
      return;
    }
    (void)element;  // 4096 is a multiple of every element size
    team->split(bytes, 4096, fn);
  };
  const bool reads_split = io.concurrent_reads(), writes_split = io.concurrent_writes();
  double read_s = 0, submit_s = 0, gpu_s = 0;
  const double tick = info_.timestamp_frequency ? 1.0 / static_cast<double>(info_.timestamp_frequency) : 0;
  // Waits for the slot's piece, adds its dispatch's GPU time and writes its output.
  const auto retire_piece = [&](unsigned k) {
    Slot& slot = slots_[k];
    if (slot.fence) wait_for(slot.fence);
    slot.fence = 0;
    if (slot.out_count == 0) return;
    std::uint64_t ts[2];
    std::memcpy(ts, query_readback_.mapped + 2 * k * sizeof(std::uint64_t), sizeof ts);
    gpu_s += ts[1] >= ts[0] ? static_cast<double>(ts[1] - ts[0]) * tick : 0.0;
    const std::uint64_t first = slot.out_first, n = slot.out_count;
    slot.out_count = 0;
    split(writes_split, n * job.out_size, job.out_size, [&](std::uint64_t at, std::uint64_t len) {
      io.write_output(first + at / job.out_size, std::span<const std::byte>(slot.readback.mapped + at, len));
    });
    io.written(first + n);
  };

  for (std::uint64_t p = 0; p < pieces; ++p) {
    const auto k = static_cast<unsigned>(p % used);
    retire_piece(k);
    next_slot_ = k;
    Slot& slot = open_slot(pso);
    const std::uint64_t first = p * piece, n = std::min(piece, job.count - first);
    // The inputs into the upload heap, before anything is recorded: a read that throws leaves
    // no recorded transition behind (the buffers' states are tracked as recorded).
    Stopwatch clock;
    std::array<std::uint64_t, 2> at{};
    for (unsigned i = 0; i < job.inputs; ++i) {
      at[i] = slot.upload_used;
      std::byte* dst = slot.upload.mapped + at[i];
      const std::uint64_t bytes = (job.scalar[i] ? 1 : n) * job.in_size;
      if (job.scalar[i]) io.read_input(i, 0, std::span<std::byte>(dst, bytes));
      else
        split(reads_split, bytes, job.in_size, [&](std::uint64_t off, std::uint64_t len) {
          io.read_input(i, first + off / job.in_size, std::span<std::byte>(dst + off, len));
        });
      std::memset(dst + bytes, 0, in_bytes(i, n) - bytes);
      slot.upload_used += in_bytes(i, n);
    }
    read_s += clock.seconds();
    ID3D12GraphicsCommandList* list = slot.list.get();
    for (unsigned i = 0; i < job.inputs; ++i) {
      d3d12::transition(list, slot.in[i], D3D12_RESOURCE_STATE_COPY_DEST);
      list->CopyBufferRegion(slot.in[i].resource.get(), 0, slot.upload.resource.get(), at[i], in_bytes(i, n));
      d3d12::transition(list, slot.in[i], D3D12_RESOURCE_STATE_NON_PIXEL_SHADER_RESOURCE);
    }
    d3d12::transition(list, slot.out, D3D12_RESOURCE_STATE_UNORDERED_ACCESS);
    gpu::KernelConstants c = job.constants;
    const gpu::DispatchGrid grid = gpu::dispatch_grid(job.key, static_cast<std::uint32_t>(n));
    c.count = static_cast<std::uint32_t>(n);
    c.threads = grid.threads;
    if (job.key.strided) c.sizes[gpu::kMaxRank - 1] = static_cast<std::uint32_t>(n);
    list->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 2 * k);
    list->SetComputeRootSignature(root_signature_.get());
    list->SetComputeRoot32BitConstants(0, gpu::kConstantWords, &c, 0);
    list->SetComputeRootShaderResourceView(1, slot.in[0].address);
    list->SetComputeRootShaderResourceView(2, slot.in[job.inputs > 1 ? 1 : 0].address);
    list->SetComputeRootUnorderedAccessView(3, slot.out.address);
    list->Dispatch(grid.groups, 1, 1);
    list->EndQuery(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 2 * k + 1);
    list->ResolveQueryData(queries_.get(), D3D12_QUERY_TYPE_TIMESTAMP, 2 * k, 2, query_readback_.resource.get(),
                           2 * k * sizeof(std::uint64_t));
    d3d12::transition(list, slot.out, D3D12_RESOURCE_STATE_COPY_SOURCE);
    list->CopyBufferRegion(slot.readback.resource.get(), 0, slot.out.resource.get(), 0, out_words(n));
    slot.out_first = first;
    slot.out_count = n;
    submit(slot, submit_s);
  }
  for (unsigned i = 0; i < used; ++i) retire_piece(static_cast<unsigned>((pieces + i) % used));
  // Wall time by what the CPU did: upload is reading into the heaps, readback writing from
  // them and waiting for the GPU (the dispatches' own time, from timestamps, is dispatch).
  const double total = wall.seconds();
  phases.upload += read_s;
  phases.dispatch += gpu_s;
  phases.readback += std::max(0.0, total - read_s - submit_s - gpu_s);
  phases.submit += submit_s;
  phases.streamed += total;
}

// One device per adapter per process: `dmlbits check` runs many cases, each with its own
// backend, and each would otherwise pay device creation and pipeline compilation again.
//
// When devices are released. A Vulkan driver may register exit handlers of its own when an
// instance is created, that is after anything of ours, so they run before our static
// destructors and exit handlers; a device released from those reaches a driver that has torn
// itself down (every d3d12 process on an NVIDIA H100 ended in SIGSEGV after its work, #36). So
// the table is never destroyed: devices are released only by release_devices(), which the
// faces call while the process still runs (the CLI's main, Python's atexit), and a device still
// in use then (a daemon thread's run, DirectML's context) is never released: the end of the
// process reclaims it without a call into the driver. The same holds on Windows, where static
// destructors run while DLLs unload.
struct DeviceTable {
  std::mutex mutex;
  std::map<unsigned, std::shared_ptr<Device>> devices;
};
DeviceTable& device_table() {
  static DeviceTable& table = *new DeviceTable;  // never destroyed: see above
  return table;
}

}  // namespace

std::shared_ptr<Device> Device::acquire(const GpuAdapter& adapter, double* created_seconds) {
  DeviceTable& table = device_table();
  std::lock_guard lock(table.mutex);
  auto& slot = table.devices[adapter.index];
  if (created_seconds) *created_seconds = 0;
  if (!slot) {
    auto device = std::make_shared<DeviceImpl>(adapter);
    if (created_seconds) *created_seconds = device->info().creation_seconds;
    slot = std::move(device);
  }
  return slot;
}

}  // namespace d3d12

std::size_t release_d3d12_devices() {
  using d3d12::Device;
  std::vector<std::shared_ptr<Device>> unused;
  std::size_t kept = 0;
  {
    d3d12::DeviceTable& table = d3d12::device_table();
    std::lock_guard lock(table.mutex);
    for (auto it = table.devices.begin(); it != table.devices.end();) {
      // The table's reference alone: no backend holds it, and none can take one without the lock.
      // (Empty where creating it failed.)
      if (!it->second || it->second.use_count() == 1) {
        unused.push_back(std::move(it->second));
        it = table.devices.erase(it);
      } else {
        ++kept;
        ++it;
      }
    }
  }
  unused.clear();  // ~DeviceImpl: waits for the queue, then vkd3d destroys the Vulkan device and instance
  return kept;
}

namespace d3d12 {

std::string_view runtime_name() {
#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
  return "vkd3d";
#else
  return d3d12api::kDefaultLibrary;
#endif
}

std::optional<std::string> runtime_unavailable_reason() {
  const Library& lib = library();
  if (lib.error.empty()) return std::nullopt;
  return lib.error;
}

}  // namespace d3d12
}  // namespace dmlbits
