// The DXGI adapters behind gpu_adapters() in a Windows build (dxgi_adapters.cpp), for the file
// that creates D3D12 devices on them (d3d12_runtime.cpp). Includes the D3D12 and DXGI headers:
// only sources compiled with d3d12.cmake's header flags may include it.
#pragma once

#include "d3d12_api.hpp"

namespace dmlbits::d3d12_detail {

// The DXGI adapter gpu_adapters().adapters[i] describes, where i is its index; nullptr for an
// index not listed. The adapters live for the rest of the process (no reference to release).
IDXGIAdapter1* dxgi_adapter(unsigned index);

}  // namespace dmlbits::d3d12_detail
