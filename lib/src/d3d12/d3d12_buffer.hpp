// Buffers and their state transitions, for the code that records work on the d3d12 backend's
// devices: d3d12_runtime.cpp, which implements them, and the directml layer, which runs on the
// same device (d3d12_device.hpp). Names D3D12 types only: include it after the D3D12 headers
// (d3d12_api.hpp, or DirectX-Headers' d3d12.h in the directml layer).
#pragma once

#include <cstddef>
#include <cstdint>

#include "com.hpp"

namespace dmlbits::d3d12 {

struct Buffer {
  Com<ID3D12Resource> resource;
  std::uint64_t capacity = 0;
  D3D12_RESOURCE_STATES state = D3D12_RESOURCE_STATE_COMMON;
  std::byte* mapped = nullptr;  // upload and readback buffers stay mapped
  D3D12_GPU_VIRTUAL_ADDRESS address = 0;
};

// Leaves `b` a buffer of at least `bytes` on `heap`: kept when it is that large, else replaced
// (contents lost) by a committed buffer in state `initial`, unordered access allowed if `uav`.
// Capacities are at least 256 bytes and whole MiB above 1 MiB, so that runs of slightly
// different sizes share buffers. Throws Errc::backend with CreateCommittedResource's HRESULT.
void ensure_buffer(ID3D12Device* device, Buffer& b, D3D12_HEAP_TYPE heap, std::uint64_t bytes,
                   D3D12_RESOURCE_STATES initial, bool uav);

// Records on `list` the barrier that moves `b` to `to`, if it is not there already.
void transition(ID3D12GraphicsCommandList* list, Buffer& b, D3D12_RESOURCE_STATES to);

}  // namespace dmlbits::d3d12
