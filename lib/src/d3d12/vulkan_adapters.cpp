// Adapters for the D3D12 backend: vkd3d runs on a Vulkan physical device, so the adapters are
// what the Vulkan loader lists. Enumerating them needs a VkInstance but no D3D12 device, which
// costs several times more (testdata/benchmarks.md, "D3D12 start-up"): that is what lets `auto`
// decide cheaply.
#include <filesystem>
#include <optional>
#include <mutex>

#include <fmt/format.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include "adapters.hpp"
#include "d3d12_backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/timing.hpp"
#include "dynamic_library.hpp"
#include "environment.hpp"
#include "foreign_allocations.hpp"
#include "vulkan_loader.hpp"

namespace dmlbits {
namespace {

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
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
    out.error = vr == VK_ERROR_INCOMPATIBLE_DRIVER
                    ? "no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER)"
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
    a.vendor = d3d12_detail::vendor_name(p.vendorID);
    a.type = type_name(p.deviceType);
    a.software = p.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
    for (std::uint32_t h = 0; h < m.memoryHeapCount; ++h)
      if (m.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) a.memory_bytes += m.memoryHeaps[h].size;
    a.api = "Vulkan";
    a.api_version = fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(p.apiVersion), VK_API_VERSION_MINOR(p.apiVersion),
                                VK_API_VERSION_PATCH(p.apiVersion));
    out.adapters.push_back(std::move(a));
  }
  if (destroy) destroy(instance, nullptr);
  if (out.adapters.empty()) out.error = "the Vulkan loader lists no physical device";
  out.seconds = clock.seconds();
  return out;
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

std::optional<std::string> no_hardware_adapter_reason() {
  std::error_code ec;
  for (const char* path : {"/dev/dxg", "/dev/nvidia0", "/dev/kgsl-3d0", "/dev/mali0"})
    if (std::filesystem::exists(path, ec)) return std::nullopt;
  for (const auto& e : std::filesystem::directory_iterator("/dev/dri", ec))
    if (e.path().filename().string().rfind("renderD", 0) == 0) return std::nullopt;
  return std::string("no GPU device node: /dev/dri/renderD*, /dev/nvidia*, /dev/dxg");
}

const AdapterList& gpu_adapters() {
  static const AdapterList list = enumerate();
  return list;
}

}  // namespace dmlbits
