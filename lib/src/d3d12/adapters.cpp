// The adapter rules both systems share: naming vendors, recognising software rasterisers,
// --adapter lookup and the default adapter. The lists themselves come from
// vulkan_adapters.cpp (Linux) or dxgi_adapters.cpp (Windows).
#include "adapters.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "d3d12_backend.hpp"
#include "dmlbits/error.hpp"
#include "environment.hpp"

namespace dmlbits {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

#if !defined(_WIN32)
// "0 NAME, 1 NAME" for VKD3D_VULKAN_DEVICE's refusal (vkd3d's variable: Linux only).
std::string adapters_help(const std::vector<GpuAdapter>& adapters) {
  std::string out;
  for (const auto& a : adapters) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", a.index, a.name);
  return out.empty() ? "none" : out;
}
#endif

// --adapter's refusal, with the adapters there are ("0 NAME") for the face to list.
[[noreturn]] void refuse_adapter(const std::vector<GpuAdapter>& adapters, std::string_view spec, OptionRule rule,
                                 std::string subject) {
  std::vector<std::string> names;
  for (const auto& a : adapters) names.push_back(fmt::format("{} {}", a.index, a.name));
  throw OptionError(OptionKey::adapter, rule, std::string(spec), std::move(subject), std::move(names));
}

}  // namespace

namespace d3d12_detail {

std::string vendor_name(std::uint32_t id) {
  switch (id) {
    case 0x1002:
      return "AMD";
    case 0x10DE:
      return "NVIDIA";
    case 0x8086:
      return "Intel";
    case 0x13B5:
      return "ARM";
    case 0x5143:
      return "Qualcomm";
    case 0x1010:
      return "Imagination";
    case 0x14E4:
      return "Broadcom";
    case 0x106B:
      return "Apple";
    case 0x15AD:
      return "VMware";
    case 0x1414:
      return "Microsoft";
    case 0x1AE0:
      return "Google";
    case 0x10005:
      return "Mesa";  // VK_VENDOR_ID_MESA: lavapipe
    default:
      return fmt::format("0x{:04x}", id);
  }
}

bool known_software_rasteriser(std::uint32_t vendor_id, std::uint32_t device_id, std::string_view name) {
  if (vendor_id == 0x10005) return true;                      // Mesa's own id: lavapipe
  if (vendor_id == 0x1414 && device_id == 0x8c) return true;  // Microsoft Basic Render Driver (WARP)
  const std::string n = lower(name);
  for (const char* word : {"llvmpipe", "lavapipe", "softpipe", "swiftshader", "basic render driver"})
    if (n.find(word) != std::string::npos) return true;
  return false;
}

}  // namespace d3d12_detail

const GpuAdapter& find_adapter(const std::vector<GpuAdapter>& adapters, std::string_view spec) {
  const auto refuse = [&](OptionRule rule, std::string subject = {}) {
    refuse_adapter(adapters, spec, rule, std::move(subject));
  };
  const bool numeric =
      !spec.empty() && std::all_of(spec.begin(), spec.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (numeric) {
    const unsigned long index = spec.size() > 9 ? ~0ul : std::stoul(std::string(spec));
    for (const auto& a : adapters)
      if (a.index == index) return a;
    refuse(OptionRule::no_such_adapter);
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
  if (matches == 0) refuse(OptionRule::no_such_adapter);
  refuse_adapter(adapters, spec, OptionRule::ambiguous, std::to_string(matches));
}

const GpuAdapter* default_adapter(const std::vector<GpuAdapter>& adapters) {
  if (adapters.empty()) return nullptr;
#if !defined(_WIN32)
  // vkd3d's own choice, which its users may have made already (wine's d3d12 is given an adapter).
  // It stands for --adapter INDEX and is held to the same rule: a value that names no device is
  // refused, never replaced by another device.
  if (const std::string env = environment_variable("VKD3D_VULKAN_DEVICE").value_or(""); !env.empty()) {
    char* end = nullptr;
    const unsigned long index = std::strtoul(env.c_str(), &end, 0);
    if (end && *end == '\0' && env[0] != '-')
      for (const auto& a : adapters)
        if (a.index == index) return &a;
    throw Error(Errc::usage,
                fmt::format("VKD3D_VULKAN_DEVICE: no Vulkan device '{}' (adapters: {})", env, adapters_help(adapters)));
  }
#endif
  // Vulkan says which devices are discrete or integrated; DXGI does not (type is empty), but
  // lists them in that order already (high performance first), so its first adapter is taken.
  for (const char* type : {"discrete", "integrated"})
    for (const auto& a : adapters)
      if (a.type == type) return &a;
  return &adapters.front();
}

}  // namespace dmlbits
