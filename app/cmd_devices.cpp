// dmlbits devices: every backend dmlbits can run on, and what it runs on.
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "app.hpp"
#include "dmlbits/front_end.hpp"
#include "dmlbits/devices.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits::app {
namespace {

struct DevicesOptions {
  bool json = false;
  std::string format;
};

// One line per backend, one per adapter under d3d12.
std::string devices_text(const DeviceList& devices) {
  std::string text;
  const auto line = [&](std::string_view name, const std::string& what) {
    text += fmt::format("{:<15}{}\n", name, what);
  };
  for (const CpuDevice& c : devices.cpu) {
    std::string desc = device_text(c.device);
    if (c.backend == BackendKind::cpu)
      desc += fmt::format(" ({}; --isa {})", thread_team_reason(c.team), fmt::join(c.isas, ", "));
    line(backend_name(c.backend), desc);
  }
  const D3d12Devices& d3d12 = devices.d3d12;
  const AdapterDevice* preferred = nullptr;
  for (const AdapterDevice& a : d3d12.adapters)
    if (a.is_default) preferred = &a;
  if (!d3d12.available) line("d3d12", "unavailable: " + d3d12_unavailable_text(d3d12));
  else
    line("d3d12", fmt::format("{} adapter{}{}", d3d12.adapters.size(), d3d12.adapters.size() == 1 ? "" : "s",
                              preferred ? fmt::format(", default {}", preferred->index) : ""));
  for (const AdapterDevice& a : d3d12.adapters) {
    // DXGI says nothing of discrete or integrated: its type is empty unless software.
    std::string desc = fmt::format("{}: {}, {}{}, {} memory, {} {}", a.name, a.vendor,
                                   a.software ? "software" : "hardware", a.type.empty() ? "" : " (" + a.type + ")",
                                   format_byte_size(a.memory_bytes, false), a.api, a.api_version);
    if (a.has_device) desc += fmt::format(", D3D feature level {}, shader model {}", a.feature_level, a.shader_model);
    else desc += fmt::format(", no D3D12 device: {}", adapter_error_text(d3d12, a));
    text += fmt::format("  adapter {:<5}{}\n", a.index, desc);
  }
  const DirectmlDevice& dml = devices.directml;
  if (dml.available) line("directml", device_text(dml.device));
  else if (dml.found)
    line("directml", fmt::format("DirectML {} ({}) found, but no device: {}", dml.version, dml.path, dml.reason));
  else line("directml", "unavailable: " + dml.reason);
  const AutoDevices& a = devices.automatic;
  line("auto", fmt::format("cpu below {} MiB of output; above, {} ({})", a.gpu_min_bytes >> 20,
                           a.large_adapter ? auto_large_outputs_text(a) : "cpu too", auto_reason_text(a)));
  return text;
}

void run_devices(const DevicesOptions& o) {
  const bool json = format_choice(o.json, o.format) == "json";
  const DeviceList devices = list_devices();
  std::cout << (json ? devices_json(devices) : devices_text(devices));
}

void setup_devices(CommandSetup* sub) {
  auto opt = std::make_shared<DevicesOptions>();
  sub->add_flag("--json", opt->json, "Print JSON (same as --format json)");
  sub->add_option("--format", opt->format, "Output format: text (default) or json")
      ->check(CLI::IsMember({"text", "json"}));
  sub->final_callback([opt] { run_devices(*opt); });
}

}  // namespace

Command devices_command() {
  return {"devices", {}, "List the backends, the D3D12 adapters and the devices they run on", setup_devices};
}

}  // namespace dmlbits::app
