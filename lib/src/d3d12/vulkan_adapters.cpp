// Adapters for the D3D12 backend: vkd3d runs on a Vulkan physical device, so the adapters are
// what the Vulkan loader lists. Enumerating them needs a VkInstance but no D3D12 device, which
// costs several times more (testdata/benchmarks.md, "D3D12 start-up"): that is what lets `auto`
// decide cheaply.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <mutex>

#include <fmt/format.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "d3d12_backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/timing.hpp"
#include "dynamic_library.hpp"
#include "environment.hpp"
#include "foreign_allocations.hpp"
#include "vulkan_loader.hpp"

namespace dmlbits {
namespace {

std::string vendor_name(std::uint32_t id) {
  switch (id) {
    case 0x1002: return "AMD";
    case 0x10DE: return "NVIDIA";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x14E4: return "Broadcom";
    case 0x106B: return "Apple";
    case 0x15AD: return "VMware";
    case 0x1414: return "Microsoft";
    case 0x1AE0: return "Google";
    case 0x10005: return "Mesa";  // VK_VENDOR_ID_MESA: lavapipe
    default: return fmt::format("0x{:04x}", id);
  }
}

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "cpu";
    default: return "other";
  }
}

AdapterList enumerate() {
  const d3d12_detail::ForeignAllocations foreign;  // see foreign_allocations.hpp
  AdapterList out;
  Stopwatch clock;
  const VulkanLoader& loader = vulkan_loader();
  if (!loader.error.empty()) {
    out.error = loader.error;
    out.seconds = clock.seconds();
    return out;
  }
  const PFN_vkGetInstanceProcAddr gipa = loader.get_instance_proc_addr;
  auto create = gipa ? reinterpret_cast<PFN_vkCreateInstance>(gipa(nullptr, "vkCreateInstance")) : nullptr;
  if (!create) {
    out.error = "the Vulkan loader lacks vkCreateInstance";
    out.seconds = clock.seconds();
    return out;
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "dmlbits";
  app.apiVersion = VK_API_VERSION_1_0;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  if (const VkResult vr = create(&ci, nullptr, &instance); vr != VK_SUCCESS) {
    out.error = vr == VK_ERROR_INCOMPATIBLE_DRIVER ? "no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)"
                                                   : fmt::format("vkCreateInstance failed: VkResult {}", static_cast<int>(vr));
    out.seconds = clock.seconds();
    return out;
  }
  auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(gipa(instance, "vkDestroyInstance"));
  auto list = reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(gipa(instance, "vkEnumeratePhysicalDevices"));
  auto props = reinterpret_cast<PFN_vkGetPhysicalDeviceProperties>(gipa(instance, "vkGetPhysicalDeviceProperties"));
  auto memory =
      reinterpret_cast<PFN_vkGetPhysicalDeviceMemoryProperties>(gipa(instance, "vkGetPhysicalDeviceMemoryProperties"));
  std::uint32_t count = 0;
  std::vector<VkPhysicalDevice> devices;
  if (list && props && memory && list(instance, &count, nullptr) == VK_SUCCESS) {
    devices.resize(count);
    if (list(instance, &count, devices.data()) != VK_SUCCESS && count == 0) devices.clear();
    devices.resize(count);
  }
  for (std::uint32_t i = 0; i < devices.size(); ++i) {
    VkPhysicalDeviceProperties p{};
    props(devices[i], &p);
    VkPhysicalDeviceMemoryProperties m{};
    memory(devices[i], &m);
    GpuAdapter a;
    a.index = i;
    a.name = p.deviceName;
    a.vendor_id = p.vendorID;
    a.device_id = p.deviceID;
    a.vendor = vendor_name(p.vendorID);
    a.type = type_name(p.deviceType);
    a.software = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    for (std::uint32_t h = 0; h < m.memoryHeapCount; ++h)
      if (m.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) a.device_local_bytes += m.memoryHeaps[h].size;
    a.api_version = fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion),
                                VK_API_VERSION_PATCH(p.apiVersion));
    out.adapters.push_back(std::move(a));
  }
  if (destroy) destroy(instance, nullptr);
  if (out.adapters.empty()) out.error = "the Vulkan loader lists no physical device";
  out.seconds = clock.seconds();
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string adapters_help(const std::vector<GpuAdapter>& adapters) {
  std::string out;
  for (const auto& a : adapters) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", a.index, a.name);
  return out.empty() ? "none" : out;
}

}  // namespace

const VulkanLoader& vulkan_loader() {
  // The loader stays loaded (DynamicLibrary never unloads): vkd3d uses it for every device.
  static const VulkanLoader loader = [] {
    VulkanLoader l;
    const DynamicLibrary lib = DynamicLibrary::open("libvulkan.so.1");
    if (!lib.loaded()) l.error = fmt::format("no Vulkan loader: {}", lib.error());
    else l.get_instance_proc_addr = lib.function<PFN_vkGetInstanceProcAddr>("vkGetInstanceProcAddr");
    return l;
  }();
  return loader;
}

bool d3d12_built() { return true; }

std::optional<std::string> gpu_device_node() {
  std::error_code ec;
  for (const char* path : {"/dev/dxg", "/dev/nvidia0", "/dev/kgsl-3d0", "/dev/mali0"})
    if (std::filesystem::exists(path, ec)) return std::string(path);
  for (const auto& e : std::filesystem::directory_iterator("/dev/dri", ec))
    if (e.path().filename().string().rfind("renderD", 0) == 0) return e.path().string();
  return std::nullopt;
}

const AdapterList& gpu_adapters() {
  static const AdapterList list = enumerate();
  return list;
}

const GpuAdapter& find_adapter(const std::vector<GpuAdapter>& adapters, std::string_view spec) {
  const bool numeric = !spec.empty() && std::all_of(spec.begin(), spec.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (numeric) {
    const unsigned long index = spec.size() > 9 ? ~0ul : std::stoul(std::string(spec));
    for (const auto& a : adapters)
      if (a.index == index) return a;
    throw Error(Errc::usage, fmt::format("--adapter: no adapter {} (adapters: {})", spec, adapters_help(adapters)));
  }
  const std::string want = lower(spec);
  const GpuAdapter* found = nullptr;
  std::size_t matches = 0;
  for (const auto& a : adapters)
    if (!want.empty() && lower(a.name).find(want) != std::string::npos) {
      found = &a;
      ++matches;
    }
  if (matches == 1) return *found;
  if (matches == 0)
    throw Error(Errc::usage, fmt::format("--adapter: no adapter named like '{}' (adapters: {})", spec, adapters_help(adapters)));
  throw Error(Errc::usage, fmt::format("--adapter: '{}' matches {} adapters; give its index (adapters: {})", spec, matches,
                                       adapters_help(adapters)));
}

const GpuAdapter* default_adapter(const std::vector<GpuAdapter>& adapters) {
  if (adapters.empty()) return nullptr;
  if (const std::string env = environment_variable("VKD3D_VULKAN_DEVICE").value_or(""); !env.empty()) {
    char* end = nullptr;
    const unsigned long index = std::strtoul(env.c_str(), &end, 0);
    if (end && *end == '\0')
      for (const auto& a : adapters)
        if (a.index == index) return &a;
  }
  for (const char* type : {"discrete", "integrated"})
    for (const auto& a : adapters)
      if (a.type == type) return &a;
  return &adapters.front();
}

}  // namespace dmlbits
