// dmlbits devices: every backend dmlbits can run on, and what it runs on.
#include "dmlbits/devices.hpp"

#include <fmt/format.h>

#include "byte_size.hpp"
#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "d3d12_backend.hpp"
#include "directml_backend.hpp"
#include "make_backend.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

// One adapter with what its D3D12 device reports (the device is created here: a few tens of
// milliseconds each).
struct AdapterReport {
  GpuAdapter adapter;
  std::optional<D3d12DeviceInfo> device;
  std::string error;  // why no device could be created
};

std::vector<AdapterReport> adapter_reports(const AdapterList& list, bool runtime_ok) {
  std::vector<AdapterReport> out;
  for (const auto& a : list.adapters) {
    AdapterReport r{a, std::nullopt, {}};
    if (runtime_ok) {
      try {
        r.device = probe_d3d12_device(a);
      } catch (const Error& e) {
        r.error = e.what();
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

DevicesReport describe_devices() {
  nlohmann::json backends = nlohmann::json::array();
  std::string text;
  const auto line = [&](std::string_view name, const std::string& what) { text += fmt::format("{:<15}{}\n", name, what); };

  // The CPU backends. The SIMD one can be held to any instruction set this CPU has (--isa).
  for (BackendKind kind : {BackendKind::cpu, BackendKind::cpu_reference}) {
    const std::string_view name = backend_name(kind);
    auto b = make_backend(kind);
    nlohmann::json j = {{"name", name}, {"device", b->device_description()}};
    std::string desc = b->device_description();
    if (kind == BackendKind::cpu) {
      std::vector<std::string> isas;
      for (Isa isa : supported_isas()) isas.emplace_back(isa_name(isa));
      const auto& cpu = static_cast<const CpuBackend&>(*b);
      j["isas"] = isas;
      j["isa"] = isa_name(cpu.isa());
      j["threads"] = cpu.threads();
      desc += fmt::format(" (--isa {})", fmt::join(isas, ", "));
    }
    line(name, desc);
    backends.push_back(j);
  }

  // The D3D12 backend: the runtime, then each adapter with its device's report.
  const auto unavailable = d3d12_runtime_unavailable_reason();
  const AdapterList& list = gpu_adapters();
  const std::vector<AdapterReport> reports = adapter_reports(list, !unavailable);
  const GpuAdapter* preferred = default_adapter(list.adapters);
  std::string reason;
  if (!d3d12_built() || unavailable) reason = *unavailable;
  else if (list.adapters.empty()) reason = "no adapter: " + list.error;
  bool any_device = false;
  for (const auto& r : reports) any_device = any_device || r.device.has_value();
  if (reason.empty() && !any_device) reason = "no adapter could create a D3D12 device";
  nlohmann::json adapters = nlohmann::json::array();
  if (!reason.empty()) line("d3d12", "unavailable: " + reason);
  else line("d3d12", fmt::format("{} adapter{}{}", reports.size(), reports.size() == 1 ? "" : "s",
                                 preferred ? fmt::format(", default {}", preferred->index) : ""));
  for (const auto& r : reports) {
    const GpuAdapter& a = r.adapter;
    nlohmann::json j = {{"index", a.index},
                        {"name", a.name},
                        {"vendor", a.vendor},
                        {"vendor_id", a.vendor_id},
                        {"device_id", a.device_id},
                        {"type", a.type},
                        {"software", a.software},
                        {"memory_bytes", a.memory_bytes},
                        {a.api == "Vulkan" ? "vulkan_api" : "dxgi", a.api_version},
                        {"default", preferred && preferred->index == a.index}};
    // DXGI says nothing of discrete or integrated: its type is empty unless software.
    std::string desc = fmt::format("{}: {}, {}{}, {} memory, {} {}", a.name, a.vendor, a.software ? "software" : "hardware",
                                   a.type.empty() ? "" : " (" + a.type + ")", format_byte_size(a.memory_bytes, false),
                                   a.api, a.api_version);
    if (r.device) {
      j["feature_level"] = r.device->feature_level;
      j["shader_model"] = r.device->shader_model;
      j["timestamp_frequency"] = r.device->timestamp_frequency;
      j["uma"] = r.device->uma;
      j["cache_coherent_uma"] = r.device->cache_coherent_uma;
      desc += fmt::format(", D3D feature level {}, shader model {}", r.device->feature_level, r.device->shader_model);
    } else {
      j["error"] = r.error.empty() ? reason : r.error;
      desc += fmt::format(", no D3D12 device: {}", r.error.empty() ? reason : r.error);
    }
    text += fmt::format("  adapter {:<5}{}\n", a.index, desc);
    adapters.push_back(j);
  }
  // Listed as a backend only where it runs, so that whoever runs every listed backend can.
  if (reason.empty()) {
    const AdapterReport* def = nullptr;
    for (const auto& r : reports)
      if (preferred && r.adapter.index == preferred->index) def = &r;
    nlohmann::json j = {{"name", "d3d12"}, {"adapters", adapters}};
    if (def && def->device)
      j["device"] = fmt::format("{}, {} adapter {}, D3D feature level {}, shader model {}", def->adapter.name,
                                def->adapter.software ? "software" : "hardware", def->adapter.index,
                                def->device->feature_level, def->device->shader_model);
    backends.push_back(j);
  }

  // DirectML: whether DirectML.dll loads, its version and the highest feature level its device
  // reports.
  const DirectmlInfo dml = probe_directml();
  const bool dml_runs = dml.found && dml.error.empty();
  nlohmann::json directml = {{"built", dml.built}, {"found", dml.found}, {"available", dml_runs}};
  if (!dml.library.empty()) directml["library"] = dml.library;
  if (!dml.path.empty()) directml["path"] = dml.path;
  if (!dml.version.empty()) directml["version"] = dml.version;
  if (dml.max_feature_level) directml["max_feature_level"] = dml.max_feature_level->short_name();
  if (!dml.adapter.empty()) directml["adapter"] = dml.adapter;
  if (!dml.error.empty()) directml["reason"] = dml.error;
  if (dml_runs) {
    const std::string desc = fmt::format("DirectML {} ({}), highest feature level {}, on {}", dml.version, dml.path,
                                         dml.max_feature_level->short_name(), dml.adapter);
    line("directml", desc);
    backends.push_back({{"name", "directml"}, {"device", desc}});
  } else if (dml.found) {
    line("directml", fmt::format("DirectML {} ({}) found, but no device: {}", dml.version, dml.path, dml.error));
  } else {
    line("directml", "unavailable: " + dml.error);
  }

  // What auto does with a large output here.
  std::string large = "cpu";
  // The adapter make_backend("auto") would choose, if its device could be created.
  const GpuAdapter* hardware = reason.empty() ? auto_adapter(list.adapters) : nullptr;
  if (hardware)
    for (const auto& r : reports)
      if (r.adapter.index == hardware->index && !r.device) hardware = nullptr;
  if (hardware) large = fmt::format("d3d12 on adapter {} ({})", hardware->index, hardware->name);
  line("auto", fmt::format("cpu below {} MiB of output; above, {}", kAutoGpuMinBytes >> 20,
                           hardware ? large : "cpu too (no hardware adapter)"));

  nlohmann::json d3d12 = {{"built", d3d12_built()},
                          {"available", reason.empty()},
                          {"adapters", adapters},
                          {"enumeration_s", list.seconds}};
  if (!reason.empty()) d3d12["reason"] = reason;
  nlohmann::json out = {{"backends", backends},
                        {"d3d12", d3d12},
                        {"directml", directml},
                        {"auto", {{"gpu_min_bytes", kAutoGpuMinBytes}, {"large_outputs", large}}}};
  return {text, out};
}


}  // namespace dmlbits
