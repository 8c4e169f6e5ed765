// VK_LAYER_DMLBITS_exit_guard, a Vulkan layer for tests (#36): it behaves as a driver with an
// exit handler of its own does. Each vkCreateInstance registers an exit handler (atexit), as a
// driver loaded for that instance would; once one has run, any Vulkan call that reaches the
// layer (destroying, freeing, waiting: what a device released at exit makes) prints its name and
// aborts. NVIDIA's Linux driver crashed every dmlbits process that way at 6bd26bf, whose D3D12
// devices were released by a static destructor after that driver's handler had run.
//
// Enabled through the loader's environment: VK_LAYER_PATH=<the manifest's folder> and
// VK_INSTANCE_LAYERS=VK_LAYER_DMLBITS_exit_guard (Debian 12's loader, 1.3.239, honours both).
// With EXIT_GUARD_LOG=<file>, each instance and device created and destroyed is appended to the
// file, so that a test can tell the layer was loaded and that devices were destroyed before exit.
// Linked with -z nodelete: the loader unloads layers at vkDestroyInstance, which would run the
// handlers at once and drop the layer's tables; this one stays until the process ends.
#include <vulkan/vk_layer.h>
#include <vulkan/vulkan.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <unordered_map>

namespace {

std::atomic<bool> exit_handler_ran{false};

void on_exit() { exit_handler_ran.store(true); }

void log(const char* what) {
  const char* path = std::getenv("EXIT_GUARD_LOG");
  if (!path || !*path) return;
  if (std::FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s%s\n", what, exit_handler_ran.load() ? " (after exit)" : "");
    std::fclose(f);
  }
}

void guard(const char* call) {
  if (!exit_handler_ran.load()) return;
  std::fprintf(stderr,
               "exit_guard layer: %s called after the exit handler registered at vkCreateInstance ran"
               " (a Vulkan object released at exit)\n",
               call);
  std::fflush(stderr);
  std::abort();
}

// Dispatchable handles start with the loader's dispatch table pointer: one key per instance
// (its physical devices share it) and per device (its queues and command buffers share it).
void* key_of(const void* handle) { return *static_cast<void* const*>(handle); }

// The next layer's or driver's function for each hooked name, resolved when the instance or
// device is created (as layers do: some answer vkGet*ProcAddr from tables they drop on destroy).
using NextTable = std::unordered_map<std::string_view, PFN_vkVoidFunction>;
struct Tables {
  std::mutex mutex;
  std::unordered_map<void*, std::pair<VkInstance, PFN_vkGetInstanceProcAddr>> instances;
  std::unordered_map<void*, std::pair<VkDevice, PFN_vkGetDeviceProcAddr>> devices;
  std::unordered_map<void*, NextTable> next;  // by instance or device key
};
Tables& tables() {
  static Tables& t = *new Tables;  // used during exit: never destroyed
  return t;
}

PFN_vkVoidFunction next_proc(const void* handle, const char* name) {
  std::lock_guard lock(tables().mutex);
  const auto it = tables().next.find(key_of(handle));
  if (it == tables().next.end()) return nullptr;
  const auto f = it->second.find(name);
  return f == it->second.end() ? nullptr : f->second;
}

// What the layer does not hook goes straight to the next one.
PFN_vkVoidFunction next_gipa_of(VkInstance instance, const char* name) {
  std::lock_guard lock(tables().mutex);
  const auto it = tables().instances.find(key_of(instance));
  return it == tables().instances.end() ? nullptr : it->second.second(instance, name);
}
PFN_vkVoidFunction next_gdpa_of(VkDevice device, const char* name) {
  std::lock_guard lock(tables().mutex);
  const auto it = tables().devices.find(key_of(device));
  return it == tables().devices.end() ? nullptr : it->second.second(device, name);
}

template <std::size_t N>
struct Name {
  char text[N];
  constexpr Name(const char (&s)[N]) { std::copy_n(s, N, text); }
};

// The layer's version of a Vulkan function: the guard, then the next layer's or driver's.
template <Name name, typename Fn>
struct Hook;
template <Name name, typename R, typename First, typename... Args>
struct Hook<name, R(VKAPI_PTR*)(First, Args...)> {
  static VKAPI_ATTR R VKAPI_CALL call(First first, Args... args) {
    guard(name.text);
    if constexpr (std::is_same_v<First, VkDevice>)
      if (std::strcmp(name.text, "vkDestroyDevice") == 0) log("vkDestroyDevice");
    if constexpr (std::is_same_v<First, VkInstance>)
      if (std::strcmp(name.text, "vkDestroyInstance") == 0) log("vkDestroyInstance");
    const PFN_vkVoidFunction next = next_proc(first, name.text);
    if (!next) {
      std::fprintf(stderr, "exit_guard layer: no next %s\n", name.text);
      std::abort();
    }
    return reinterpret_cast<R(VKAPI_PTR*)(First, Args...)>(next)(first, args...);
  }
};

#define EXIT_GUARD_HOOK(fn) \
  { #fn, reinterpret_cast < PFN_vkVoidFunction>(&Hook <#fn, PFN_##fn>::call) }

struct Entry {
  const char* name;
  PFN_vkVoidFunction fn;
};

// What a device or instance released at exit calls: vkd3d's teardown and the fence waits before it.
const Entry kInstanceHooks[] = {
    EXIT_GUARD_HOOK(vkDestroyInstance),
    EXIT_GUARD_HOOK(vkEnumeratePhysicalDevices),
    EXIT_GUARD_HOOK(vkGetPhysicalDeviceProperties),
    EXIT_GUARD_HOOK(vkGetPhysicalDeviceMemoryProperties),
};
const Entry kDeviceHooks[] = {
    EXIT_GUARD_HOOK(vkDestroyDevice),
    EXIT_GUARD_HOOK(vkDeviceWaitIdle),
    EXIT_GUARD_HOOK(vkQueueWaitIdle),
    EXIT_GUARD_HOOK(vkQueueSubmit),
    EXIT_GUARD_HOOK(vkWaitForFences),
    EXIT_GUARD_HOOK(vkGetFenceStatus),
    EXIT_GUARD_HOOK(vkResetFences),
    EXIT_GUARD_HOOK(vkDestroyFence),
    EXIT_GUARD_HOOK(vkDestroySemaphore),
    EXIT_GUARD_HOOK(vkDestroyEvent),
    EXIT_GUARD_HOOK(vkDestroyBuffer),
    EXIT_GUARD_HOOK(vkDestroyBufferView),
    EXIT_GUARD_HOOK(vkDestroyImage),
    EXIT_GUARD_HOOK(vkDestroyImageView),
    EXIT_GUARD_HOOK(vkDestroySampler),
    EXIT_GUARD_HOOK(vkMapMemory),
    EXIT_GUARD_HOOK(vkUnmapMemory),
    EXIT_GUARD_HOOK(vkFreeMemory),
    EXIT_GUARD_HOOK(vkDestroyPipeline),
    EXIT_GUARD_HOOK(vkDestroyPipelineLayout),
    EXIT_GUARD_HOOK(vkDestroyPipelineCache),
    EXIT_GUARD_HOOK(vkDestroyShaderModule),
    EXIT_GUARD_HOOK(vkDestroyDescriptorSetLayout),
    EXIT_GUARD_HOOK(vkDestroyDescriptorPool),
    EXIT_GUARD_HOOK(vkFreeDescriptorSets),
    EXIT_GUARD_HOOK(vkDestroyCommandPool),
    EXIT_GUARD_HOOK(vkResetCommandPool),
    EXIT_GUARD_HOOK(vkFreeCommandBuffers),
    EXIT_GUARD_HOOK(vkDestroyQueryPool),
    EXIT_GUARD_HOOK(vkDestroyRenderPass),
    EXIT_GUARD_HOOK(vkDestroyFramebuffer),
};

PFN_vkVoidFunction find(const Entry* begin, const Entry* end, const char* name) {
  for (const Entry* e = begin; e != end; ++e)
    if (std::strcmp(e->name, name) == 0) return e->fn;
  return nullptr;
}
PFN_vkVoidFunction device_hook(const char* name) {
  return find(std::begin(kDeviceHooks), std::end(kDeviceHooks), name);
}

template <typename Info, VkStructureType type, typename Function>
Info* chain_info(const void* next, Function function) {
  for (auto* p = static_cast<const VkBaseInStructure*>(next); p; p = p->pNext)
    if (p->sType == type && reinterpret_cast<const Info*>(p)->function == function)
      return const_cast<Info*>(reinterpret_cast<const Info*>(p));
  return nullptr;
}

VKAPI_ATTR VkResult VKAPI_CALL create_instance(const VkInstanceCreateInfo* info, const VkAllocationCallbacks* allocator,
                                               VkInstance* instance) {
  guard("vkCreateInstance");
  auto* link = chain_info<VkLayerInstanceCreateInfo, VK_STRUCTURE_TYPE_LOADER_INSTANCE_CREATE_INFO>(info->pNext,
                                                                                                    VK_LAYER_LINK_INFO);
  if (!link || !link->u.pLayerInfo) return VK_ERROR_INITIALIZATION_FAILED;
  const PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  const auto create = reinterpret_cast<PFN_vkCreateInstance>(next_gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  const VkResult result = create(info, allocator, instance);
  if (result != VK_SUCCESS) return result;
  {
    std::lock_guard lock(tables().mutex);
    tables().instances[key_of(*instance)] = {*instance, next_gipa};
    NextTable& next = tables().next[key_of(*instance)];
    for (const Entry& e : kInstanceHooks) next[e.name] = next_gipa(*instance, e.name);
  }
  std::atexit(on_exit);  // a driver loaded for this instance registers its handler now
  log("vkCreateInstance");
  return result;
}

VKAPI_ATTR VkResult VKAPI_CALL create_device(VkPhysicalDevice physical, const VkDeviceCreateInfo* info,
                                             const VkAllocationCallbacks* allocator, VkDevice* device) {
  guard("vkCreateDevice");
  auto* link =
      chain_info<VkLayerDeviceCreateInfo, VK_STRUCTURE_TYPE_LOADER_DEVICE_CREATE_INFO>(info->pNext, VK_LAYER_LINK_INFO);
  if (!link || !link->u.pLayerInfo) return VK_ERROR_INITIALIZATION_FAILED;
  const PFN_vkGetInstanceProcAddr next_gipa = link->u.pLayerInfo->pfnNextGetInstanceProcAddr;
  const PFN_vkGetDeviceProcAddr next_gdpa = link->u.pLayerInfo->pfnNextGetDeviceProcAddr;
  link->u.pLayerInfo = link->u.pLayerInfo->pNext;
  VkInstance instance = VK_NULL_HANDLE;
  {
    std::lock_guard lock(tables().mutex);
    const auto it = tables().instances.find(key_of(physical));
    if (it != tables().instances.end()) instance = it->second.first;
  }
  const auto create = reinterpret_cast<PFN_vkCreateDevice>(next_gipa(instance, "vkCreateDevice"));
  if (!create) return VK_ERROR_INITIALIZATION_FAILED;
  const VkResult result = create(physical, info, allocator, device);
  if (result != VK_SUCCESS) return result;
  {
    std::lock_guard lock(tables().mutex);
    tables().devices[key_of(*device)] = {*device, next_gdpa};
    NextTable& next = tables().next[key_of(*device)];
    for (const Entry& e : kDeviceHooks) next[e.name] = next_gdpa(*device, e.name);
  }
  log("vkCreateDevice");
  return result;
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL layer_gdpa(VkDevice device, const char* name) {
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&layer_gdpa);
  if (PFN_vkVoidFunction hook = device_hook(name)) return hook;
  return next_gdpa_of(device, name);
}

VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL layer_gipa(VkInstance instance, const char* name) {
  if (std::strcmp(name, "vkGetInstanceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&layer_gipa);
  if (std::strcmp(name, "vkGetDeviceProcAddr") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&layer_gdpa);
  if (std::strcmp(name, "vkCreateInstance") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&create_instance);
  if (std::strcmp(name, "vkCreateDevice") == 0) return reinterpret_cast<PFN_vkVoidFunction>(&create_device);
  if (PFN_vkVoidFunction hook = find(std::begin(kInstanceHooks), std::end(kInstanceHooks), name)) return hook;
  if (PFN_vkVoidFunction hook = device_hook(name)) return hook;
  return instance ? next_gipa_of(instance, name) : nullptr;
}

}  // namespace

// The entry points the loader looks up by name; within the layer only the internal ones are
// used, so that no other library's vkGetInstanceProcAddr is taken for the layer's.
extern "C" {

VK_LAYER_EXPORT VKAPI_ATTR VkResult VKAPI_CALL vkNegotiateLoaderLayerInterfaceVersion(VkNegotiateLayerInterface* v) {
  if (v->loaderLayerInterfaceVersion > 2) v->loaderLayerInterfaceVersion = 2;
  v->pfnGetInstanceProcAddr = &layer_gipa;
  v->pfnGetDeviceProcAddr = &layer_gdpa;
  v->pfnGetPhysicalDeviceProcAddr = nullptr;
  return VK_SUCCESS;
}

VK_LAYER_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetInstanceProcAddr(VkInstance instance, const char* name) {
  return layer_gipa(instance, name);
}

VK_LAYER_EXPORT VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL vkGetDeviceProcAddr(VkDevice device, const char* name) {
  return layer_gdpa(device, name);
}

}  // extern "C"
