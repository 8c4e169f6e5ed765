// The exit_guard layer's own check (tests/cli/exit_guard.sh): a Vulkan instance released at exit
// must make the layer abort, or a passing run under it proves nothing.
//   exit_guard_probe late   an exit handler registered before the instance is created destroys
//                           it (after the layer's handler, as 6bd26bf's static device map did)
//   exit_guard_probe early  the instance is destroyed before main returns: exits 0
// Exits 77 when no Vulkan loader or driver is there.
#include <dlfcn.h>

#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

PFN_vkGetInstanceProcAddr gipa = nullptr;
VkInstance instance = VK_NULL_HANDLE;

void destroy_instance() {
  if (instance == VK_NULL_HANDLE) return;
  const auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(gipa(instance, "vkDestroyInstance"));
  destroy(instance, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  const bool late = argc > 1 && std::strcmp(argv[1], "late") == 0;
  void* loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!loader) return 77;
  gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(loader, "vkGetInstanceProcAddr"));
  if (late) std::atexit(destroy_instance);
  const auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.apiVersion = VK_API_VERSION_1_0;
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  if (create(&info, nullptr, &instance) != VK_SUCCESS) return 77;
  if (!late) destroy_instance();
  std::puts("probe: main returns");
  return 0;
}
