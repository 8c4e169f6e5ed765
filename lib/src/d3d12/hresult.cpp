// hresult_text (d3d12_runtime.hpp), compiled in every build, with or without the D3D12 headers:
// the DirectML layer reports its calls' failures with it too.
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "d3d12_runtime.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits::d3d12 {
namespace {

struct HresultName {
  std::uint32_t value;
  const char* name;
};
constexpr HresultName kHresultNames[] = {
    {0x00000000u, "S_OK"},
    {0x00000001u, "S_FALSE"},
    {0x80004001u, "E_NOTIMPL"},
    {0x80004002u, "E_NOINTERFACE"},
    {0x80004003u, "E_POINTER"},
    {0x80004004u, "E_ABORT"},
    {0x80004005u, "E_FAIL"},
    {0x8000FFFFu, "E_UNEXPECTED"},
    {0x80070005u, "E_ACCESSDENIED"},
    {0x80070006u, "E_HANDLE"},
    {0x8007000Eu, "E_OUTOFMEMORY"},
    {0x80070057u, "E_INVALIDARG"},
    {0x887A0001u, "DXGI_ERROR_INVALID_CALL"},
    {0x887A0002u, "DXGI_ERROR_NOT_FOUND"},
    {0x887A0004u, "DXGI_ERROR_UNSUPPORTED"},
    {0x887A0005u, "DXGI_ERROR_DEVICE_REMOVED"},
    {0x887A0006u, "DXGI_ERROR_DEVICE_HUNG"},
    {0x887A0007u, "DXGI_ERROR_DEVICE_RESET"},
    {0x887A0020u, "DXGI_ERROR_DRIVER_INTERNAL_ERROR"},
    {0x887E0001u, "D3D12_ERROR_ADAPTER_NOT_FOUND"},
    {0x887E0002u, "D3D12_ERROR_DRIVER_VERSION_MISMATCH"},
};

}  // namespace

std::string hresult_text(std::int32_t hr) {
  const auto v = static_cast<std::uint32_t>(hr);
  for (const auto& n : kHresultNames)
    if (n.value == v) return fmt::format("0x{:08X} ({})", v, n.name);
  return fmt::format("0x{:08X}", v);
}

void throw_hresult(std::string_view call, std::int32_t hr, std::string_view what) {
  throw Error(Errc::backend, fmt::format("{} failed: {}{}{}", call, hresult_text(hr), what.empty() ? "" : " ", what));
}

}  // namespace dmlbits::d3d12
