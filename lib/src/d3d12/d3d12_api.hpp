// The one place that chooses the Direct3D 12 headers. Include it from exactly the sources that
// talk to D3D12 (d3d12_runtime.cpp), with DMLBITS_D3D12_HEADERS_VKD3D or
// DMLBITS_D3D12_HEADERS_DIRECTX defined by d3d12.cmake.
//
// Why two: vkd3d's COM methods use the Microsoft x64 calling convention (ms_abi) and return
// aggregates through a hidden pointer; Microsoft's DirectX-Headers on Linux (made for WSL's
// libd3d12.so) declare the System V convention. Code built against one and run on the other
// passes arguments wrongly, so the headers must match the runtime that is loaded:
//   vkd3d   -> libvkd3d-utils.so.1 (Linux, D3D12 over Vulkan)
//   directx -> d3d12.dll (Windows) or libd3d12.so (WSL)
// IIDs are identical in both. Code outside this header uses only what both declare, plus the
// constants and iid_of below; COM references are owned by com.hpp's Com.
#pragma once

#if defined(DMLBITS_D3D12_HEADERS_VKD3D)
// vkd3d_windows.h defines min/max macros unless NOMINMAX; its __uuidof needs gnu++ (typeof);
// WIDL_EXPLICIT_AGGREGATE_RETURNS makes aggregate returns match vkd3d's ABI. d3d12.cmake passes
// all three; checked here so that a wrong build fails loudly rather than crashing at run time.
#ifndef NOMINMAX
#error "build the D3D12 backend with -DNOMINMAX"
#endif
#ifndef WIDL_EXPLICIT_AGGREGATE_RETURNS
#error "build the D3D12 backend with -DWIDL_EXPLICIT_AGGREGATE_RETURNS (vkd3d's ABI for aggregate returns)"
#endif
#include <vkd3d_utils.h>  // vkd3d_windows.h (Windows types), vkd3d_d3d12.h, vkd3d's own functions

namespace dmlbits::d3d12api {
inline constexpr const char* kDefaultLibrary = "libvkd3d-utils.so.1";
inline constexpr const char* kLibraryVariable = "DMLBITS_VKD3D_LIBRARY";  // names another library
inline constexpr const char* kHeaders = "vkd3d";
// vkd3d signals fences through events of its own (vkd3d_create_event and friends).
inline constexpr bool kEventsFromLibrary = true;
// (vkd3d's __uuidof expands to GNU typeof, which clang's -Wlanguage-extension-token reports.)
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wlanguage-extension-token"
#endif
template <class T>
const GUID& iid_of() {
  return __uuidof(T);
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
}  // namespace dmlbits::d3d12api

#elif defined(DMLBITS_D3D12_HEADERS_DIRECTX) && defined(_WIN32)
// Windows (mingw-w64): DirectX-Headers' d3d12.h, which declares methods returning structures
// with the convention d3d12.dll uses (mingw's own d3d12.h is older and stops at ID3D12Device1),
// then DXGI from mingw's headers (DirectX-Headers has none), then DirectX-Headers' IIDs
// (without them the link fails on __mingw_uuidof<ID3D12Device>). MIDL's d3d12.h demands
// rpcndr.h version 500 while mingw's is 475 (mingw's headers work with it): included first, its
// include guard skips the check.
#include <rpc.h>
#include <rpcndr.h>
#include <directx/d3d12.h>
#include <dxgi1_6.h>
#include <dxguids/dxguids.h>

namespace dmlbits::d3d12api {
inline constexpr const char* kDefaultLibrary = "d3d12.dll";
inline constexpr const char* kLibraryVariable = "DMLBITS_D3D12_LIBRARY";
inline constexpr const char* kDxgiLibrary = "dxgi.dll";  // the adapters (dxgi_adapters.cpp)
inline constexpr const char* kHeaders = "directx";
// SetEventOnCompletion(value, nullptr) blocks until the fence reaches the value.
inline constexpr bool kEventsFromLibrary = false;
template <class T>
const GUID& iid_of() {
  return __uuidof(T);
}
}  // namespace dmlbits::d3d12api

#elif defined(DMLBITS_D3D12_HEADERS_DIRECTX)
#include <wsl/winadapter.h>  // Windows types for Linux (WSL)
#include <directx/d3d12.h>
#include <dxguids/dxguids.h>

namespace dmlbits::d3d12api {
inline constexpr const char* kDefaultLibrary = "libd3d12.so";
inline constexpr const char* kLibraryVariable = "DMLBITS_VKD3D_LIBRARY";
inline constexpr const char* kHeaders = "directx";
// SetEventOnCompletion(value, nullptr) blocks until the fence reaches the value.
inline constexpr bool kEventsFromLibrary = false;
template <class T>
const GUID& iid_of() {
  static const GUID iid = uuidof<T>();
  return iid;
}
}  // namespace dmlbits::d3d12api

#else
#error "define DMLBITS_D3D12_HEADERS_VKD3D or DMLBITS_D3D12_HEADERS_DIRECTX (d3d12.cmake does)"
#endif
