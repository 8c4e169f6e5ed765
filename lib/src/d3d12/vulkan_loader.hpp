// The Vulkan loader (libvulkan.so.1), loaded once per process and never unloaded: the adapters
// are listed through it (vulkan_adapters.cpp), and vkd3d is handed the same loader when a device
// is created (d3d12_runtime.cpp), so that adapter indices mean the same physical devices.
#pragma once

#include <string>

#include <vulkan/vulkan.h>

namespace dmlbits {

struct VulkanLoader {
  // nullptr when the loader cannot be loaded or lacks it; `error` then says why.
  PFN_vkGetInstanceProcAddr get_instance_proc_addr = nullptr;
  std::string error;  // "no Vulkan loader: ..." or empty
};

// Loaded on first use, from any thread.
const VulkanLoader& vulkan_loader();

}  // namespace dmlbits
