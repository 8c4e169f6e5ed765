// dmlbits devices: every backend dmlbits can run on, and what it runs on.
#include "dmlbits/devices.hpp"
#include "dmlbits/request.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "auto_rule.hpp"
#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "cpu_reference.hpp"
#include "thread_rule.hpp"
#include "d3d12_backend.hpp"
#include "directml_backend.hpp"
#include "make_backend.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"

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

DeviceList list_devices() {
  DeviceList out;
  // As a run that names none of the options gets them: DMLBITS_ISA and DMLBITS_THREADS, as
  // prepare_request() resolves them.
  const CpuChoice unless_told = check_backend_choice(BackendKind::cpu, "", "", std::nullopt);
  // The CPU backends. The SIMD one can be held to any instruction set this CPU has (--isa).
  for (BackendKind kind : {BackendKind::cpu, BackendKind::cpu_reference}) {
    const std::unique_ptr<Backend> b = kind == BackendKind::cpu
                                           ? std::unique_ptr<Backend>(std::make_unique<CpuBackend>(
                                                 unless_told.isa, CpuBackendOptions{.threads = unless_told.threads}))
                                           : std::make_unique<CpuReferenceBackend>();
    CpuDevice d{kind, b->device_description(), {}, {}, 0, {}};
    if (kind == BackendKind::cpu) {
      for (Isa isa : supported_isas()) d.isas.emplace_back(isa_name(isa));
      const auto& cpu = static_cast<const CpuBackend&>(*b);
      d.isa = isa_name(cpu.isa());
      d.threads = cpu.threads();
      d.team = cpu.thread_team();
    }
    out.cpu.push_back(std::move(d));
  }

  // The D3D12 backend: the runtime, then each adapter with its device's report.
  const auto unavailable = d3d12_runtime_unavailable_reason();
  const AdapterList& list = gpu_adapters();
  const std::vector<AdapterReport> reports = adapter_reports(list, !unavailable);
  const GpuAdapter* preferred = default_adapter(list.adapters);
  D3d12Devices& d3d12 = out.d3d12;
  if (!d3d12_built() || unavailable) {
    d3d12.unavailable = D3d12Unavailable::runtime;
    d3d12.detail = *unavailable;
  } else if (list.adapters.empty()) {
    d3d12.unavailable = D3d12Unavailable::no_adapter;
    d3d12.detail = list.error;
  }
  bool any_device = false;
  for (const auto& r : reports) any_device = any_device || r.device.has_value();
  if (d3d12.unavailable == D3d12Unavailable::none && !any_device) d3d12.unavailable = D3d12Unavailable::no_device;
  d3d12.built = d3d12_built();
  d3d12.available = d3d12.unavailable == D3d12Unavailable::none;
  d3d12.enumeration_s = list.seconds;
  for (const auto& r : reports) {
    const GpuAdapter& a = r.adapter;
    AdapterDevice d;
    d.index = a.index;
    d.name = a.name;
    d.vendor = a.vendor;
    d.vendor_id = a.vendor_id;
    d.device_id = a.device_id;
    d.type = a.type;
    d.software = a.software;
    d.memory_bytes = a.memory_bytes;
    d.api = a.api;
    d.api_version = a.api_version;
    d.is_default = preferred && preferred->index == a.index;
    if (r.device) {
      d.has_device = true;
      d.feature_level = r.device->feature_level;
      d.shader_model = r.device->shader_model;
      d.timestamp_frequency = r.device->timestamp_frequency;
      d.uma = r.device->uma;
      d.cache_coherent_uma = r.device->cache_coherent_uma;
    } else {
      d.error = r.error;
    }
    d3d12.adapters.push_back(std::move(d));
  }
  if (d3d12.available)
    for (const auto& r : reports)
      if (preferred && r.adapter.index == preferred->index && r.device)
        d3d12.device = {.kind = DeviceKind::d3d12,
                        .adapter = r.adapter.name,
                        .adapter_index = r.adapter.index,
                        .software = r.adapter.software,
                        .feature_level = r.device->feature_level,
                        .shader_model = r.device->shader_model};

  // DirectML: whether DirectML.dll loads, its version and the highest feature level its device
  // reports.
  const DirectmlInfo dml = probe_directml();
  DirectmlDevice& directml = out.directml;
  directml.built = dml.built;
  directml.found = dml.found;
  directml.available = dml.found && dml.error.empty();
  directml.library = dml.library;
  directml.path = dml.path;
  directml.version = dml.version;
  directml.max_feature_level = dml.max_feature_level;
  directml.adapter = dml.adapter;
  directml.reason = dml.error;
  if (directml.available)
    directml.device = {.kind = DeviceKind::directml,
                       .adapter = dml.adapter,
                       .feature_level = std::string(dml.max_feature_level->short_name()),
                       .version = dml.version,
                       .path = dml.path};

  // What auto does with a large output here: the adapter make_backend would look at for automatic,
  // if its device could be created, and what decide_auto says of it for a typical large run.
  out.automatic.gpu_min_bytes = kAutoGpuMinBytes;
  const GpuAdapter* hardware = d3d12.available ? auto_adapter(list.adapters) : nullptr;
  if (hardware)
    for (const auto& r : reports)
      if (r.adapter.index == hardware->index && !r.device) hardware = nullptr;
  if (hardware) {
    const AutoWork work{2 * kAutoExampleBytes, kAutoExampleBytes, cpu_threads(unless_told.threads)};
    const AutoEstimate decision = decide_auto(auto_adapter_description(*hardware), work);
    out.automatic.estimate = decision;
    if (decision.gpu) {
      out.automatic.large_adapter = hardware->index;
      out.automatic.large_adapter_name = hardware->name;
    }
  }
  return out;
}

void release_gpu_devices() { (void)release_d3d12_devices(); }
unsigned machine_cpu_threads() { return cpu_thread_rule(this_machine(), UINT64_MAX).team; }

std::string d3d12_unavailable_text(const D3d12Devices& d3d12) {
  switch (d3d12.unavailable) {
    case D3d12Unavailable::none:
      break;
    case D3d12Unavailable::runtime:
      return d3d12.detail;
    case D3d12Unavailable::no_adapter:
      return "no adapter: " + d3d12.detail;
    case D3d12Unavailable::no_device:
      return "no adapter could create a D3D12 device";
  }
  return "";
}

std::string adapter_error_text(const D3d12Devices& d3d12, const AdapterDevice& a) {
  return a.error.empty() ? d3d12_unavailable_text(d3d12) : a.error;
}

std::string auto_large_outputs_text(const AutoDevices& a) {
  return a.large_adapter ? fmt::format("d3d12 on adapter {} ({})", *a.large_adapter, a.large_adapter_name) : "cpu";
}

std::string auto_reason_text(const AutoDevices& a) {
  if (!a.estimate) return "no hardware adapter";
  return fmt::format("an `and` of two {} inputs: {}", format_byte_size(kAutoExampleBytes, false),
                     auto_estimate_text(*a.estimate));
}

std::string devices_json(const DeviceList& devices) {
  nlohmann::json backends = nlohmann::json::array();
  for (const CpuDevice& c : devices.cpu) {
    nlohmann::json j = {{"name", backend_name(c.backend)}, {"device", device_text(c.device)}};
    if (c.backend == BackendKind::cpu) {
      j["isas"] = c.isas;
      j["isa"] = c.isa;
      j["threads"] = c.threads;
      j["threads_reason"] = thread_team_reason(c.team);
    }
    backends.push_back(j);
  }
  const D3d12Devices& d3d12 = devices.d3d12;
  nlohmann::json adapters = nlohmann::json::array();
  for (const AdapterDevice& a : d3d12.adapters) {
    nlohmann::json j = {{"index", a.index},
                        {"name", a.name},
                        {"vendor", a.vendor},
                        {"vendor_id", a.vendor_id},
                        {"device_id", a.device_id},
                        {"type", a.type},
                        {"software", a.software},
                        {"memory_bytes", a.memory_bytes},
                        {a.api == "Vulkan" ? "vulkan_api" : "dxgi", a.api_version},
                        {"default", a.is_default}};
    if (a.has_device) {
      j["feature_level"] = a.feature_level;
      j["shader_model"] = a.shader_model;
      j["timestamp_frequency"] = a.timestamp_frequency;
      j["uma"] = a.uma;
      j["cache_coherent_uma"] = a.cache_coherent_uma;
    } else {
      j["error"] = adapter_error_text(d3d12, a);
    }
    adapters.push_back(j);
  }
  // Listed as a backend only where it runs, so that whoever runs every listed backend can.
  if (d3d12.available) {
    nlohmann::json j = {{"name", "d3d12"}, {"adapters", adapters}};
    if (d3d12.device.kind != DeviceKind::none) j["device"] = device_text(d3d12.device);
    backends.push_back(j);
  }
  const DirectmlDevice& dml = devices.directml;
  nlohmann::json directml = {{"built", dml.built}, {"found", dml.found}, {"available", dml.available}};
  if (!dml.library.empty()) directml["library"] = dml.library;
  if (!dml.path.empty()) directml["path"] = dml.path;
  if (!dml.version.empty()) directml["version"] = dml.version;
  if (dml.max_feature_level) directml["max_feature_level"] = dml.max_feature_level->short_name();
  if (!dml.adapter.empty()) directml["adapter"] = dml.adapter;
  if (!dml.reason.empty()) directml["reason"] = dml.reason;
  if (dml.available) backends.push_back({{"name", "directml"}, {"device", device_text(dml.device)}});

  const AutoDevices& a = devices.automatic;
  const std::string large = auto_large_outputs_text(a);
  nlohmann::json d3d12_json = {{"built", d3d12.built},
                               {"available", d3d12.available},
                               {"adapters", adapters},
                               {"enumeration_s", d3d12.enumeration_s}};
  if (!d3d12.available) d3d12_json["reason"] = d3d12_unavailable_text(d3d12);
  const nlohmann::json out = {
      {"backends", backends},
      {"d3d12", d3d12_json},
      {"directml", directml},
      {"auto", {{"gpu_min_bytes", a.gpu_min_bytes}, {"large_outputs", large}, {"reason", auto_reason_text(a)}}}};
  return out.dump(2) + "\n";
}

}  // namespace dmlbits
