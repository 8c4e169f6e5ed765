// What the two adapter enumerations (vulkan_adapters.cpp on Linux, dxgi_adapters.cpp on
// Windows) share: naming a vendor, and recognising a software rasteriser that its API does not
// mark as one (wine's DXGI reports lavapipe as a plain adapter with no DXGI_ADAPTER_FLAG_SOFTWARE).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dmlbits::d3d12_detail {

// "NVIDIA", "AMD", "Intel", "Mesa"..., or the PCI (or Vulkan) vendor id in hex.
std::string vendor_name(std::uint32_t vendor_id);

// True for the CPU implementations dmlbits knows by vendor or name: Mesa's vendor id 0x10005
// (lavapipe, which wine's DXGI passes on), llvmpipe, lavapipe, softpipe, SwiftShader, and
// Microsoft's Basic Render Driver (WARP, vendor 0x1414 device 0x8c).
bool known_software_rasteriser(std::uint32_t vendor_id, std::uint32_t device_id, std::string_view name);

}  // namespace dmlbits::d3d12_detail
