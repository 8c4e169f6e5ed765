// Adapters for the D3D12 backend on Windows: DXGI's, from dxgi.dll loaded at run time (as
// d3d12.dll is, so that dmlbits.exe starts, and its CPU backends run, where either is missing).
// IDXGIFactory6::EnumAdapterByGpuPreference(HIGH_PERFORMANCE) lists discrete GPUs before
// integrated ones before software adapters; a DXGI older than 1.6 has only EnumAdapters1.
// Listing adapters creates no D3D12 device.
#include "dxgi_adapters.hpp"

#include <vector>

#include <fmt/format.h>

#include "adapters.hpp"
#include "com.hpp"
#include "d3d12_backend.hpp"
#include "d3d12_runtime.hpp"
#include "dmlbits/timing.hpp"
#include "dynamic_library.hpp"
#include "files.hpp"

namespace dmlbits {
namespace {

using d3d12::Com;
using d3d12api::iid_of;

struct Enumeration {
  AdapterList list;
  // Never released: the D3D12 devices created on them live until the process ends, and the
  // order in which static objects of different files are destroyed is not ours to choose.
  std::vector<IDXGIAdapter1*> dxgi;
};

std::string failed(std::string_view call, HRESULT hr) {
  return fmt::format("{} failed: {}", call, d3d12::hresult_text(static_cast<std::int32_t>(hr)));
}

Enumeration enumerate() {
  Enumeration out;
  Stopwatch clock;
  const auto done = [&](std::string error) {
    out.list.error = std::move(error);
    out.list.seconds = clock.seconds();
    return std::move(out);
  };
  const DynamicLibrary lib = DynamicLibrary::open(d3d12api::kDxgiLibrary);  // stays loaded
  if (!lib.loaded()) return done(fmt::format("no DXGI: {}", lib.error()));
  using CreateFactory = HRESULT(WINAPI*)(REFIID, void**);
  const auto create = lib.function<CreateFactory>("CreateDXGIFactory1");
  if (!create) return done(fmt::format("{}: no symbol CreateDXGIFactory1", d3d12api::kDxgiLibrary));
  Com<IDXGIFactory1> factory;
  // Under wine without an X display this fails with DXGI_ERROR_UNSUPPORTED (0x887A0004).
  if (const HRESULT hr = create(iid_of<IDXGIFactory1>(), factory.out()); FAILED(hr))
    return done(failed("CreateDXGIFactory1", hr));
  Com<IDXGIFactory6> factory6;
  if (FAILED(factory->QueryInterface(iid_of<IDXGIFactory6>(), factory6.out()))) factory6.reset();
  for (UINT i = 0;; ++i) {
    Com<IDXGIAdapter1> adapter;
    const HRESULT hr = factory6 ? factory6->EnumAdapterByGpuPreference(i, DXGI_GPU_PREFERENCE_HIGH_PERFORMANCE,
                                                                       iid_of<IDXGIAdapter1>(), adapter.out())
                                : factory->EnumAdapters1(i, reinterpret_cast<IDXGIAdapter1**>(adapter.out()));
    if (hr == DXGI_ERROR_NOT_FOUND) break;
    if (FAILED(hr)) return done(failed(factory6 ? "EnumAdapterByGpuPreference" : "EnumAdapters1", hr));
    DXGI_ADAPTER_DESC1 d{};
    if (const HRESULT dr = adapter->GetDesc1(&d); FAILED(dr)) return done(failed("IDXGIAdapter1::GetDesc1", dr));
    GpuAdapter a;
    a.index = i;
    a.name = utf8_from_wide(d.Description);
    a.vendor_id = d.VendorId;
    a.device_id = d.DeviceId;
    a.vendor = d3d12_detail::vendor_name(d.VendorId);
    a.software = (d.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) != 0 ||
                 d3d12_detail::known_software_rasteriser(d.VendorId, d.DeviceId, a.name);
    a.type = a.software ? "cpu" : "";
    a.memory_bytes = d.DedicatedVideoMemory;
    a.api = "DXGI";
    a.api_version = factory6 ? "1.6" : "1.1";
    out.list.adapters.push_back(std::move(a));
    IDXGIAdapter1* kept = adapter.get();
    kept->AddRef();
    out.dxgi.push_back(kept);
  }
  return done(out.list.adapters.empty() ? "DXGI lists no adapter" : "");
}

const Enumeration& enumeration() {
  static const Enumeration e = enumerate();
  return e;
}

}  // namespace

const AdapterList& gpu_adapters() { return enumeration().list; }

std::optional<std::string> no_hardware_adapter_reason() { return std::nullopt; }

IDXGIAdapter1* d3d12_detail::dxgi_adapter(unsigned index) {
  const auto& dxgi = enumeration().dxgi;
  return index < dxgi.size() ? dxgi[index] : nullptr;
}

}  // namespace dmlbits
