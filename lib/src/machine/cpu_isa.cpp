#include "cpu_isa.hpp"

#include <array>
#include <atomic>
#include <vector>

#include <fmt/format.h>

#include "cpu_features.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

constexpr std::array<std::string_view, kIsaCount> kIsaNames{"scalar", "avx2", "avx512"};

// -1: no override; else the Isa's value.
std::atomic<int> g_forced{-1};

}  // namespace

const CpuFeatures& cpu_features() {
  // The operating system's part (which features it enables, and where to read them cheaply) is
  // the platform layer's.
  static const CpuFeatures features = detect_x86_features();
  return features;
}

CpuVendor cpu_vendor() {
  static const CpuVendor vendor = detect_x86_vendor();
  return vendor;
}

std::string_view cpu_vendor_name(CpuVendor vendor) {
  switch (vendor) {
    case CpuVendor::intel:
      return "intel";
    case CpuVendor::amd:
      return "amd";
    case CpuVendor::other:
      break;
  }
  return "other";
}

std::string_view isa_name(Isa isa) { return kIsaNames.at(static_cast<std::size_t>(isa)); }

std::optional<Isa> parse_isa(std::string_view name) {
  for (std::size_t i = 0; i < kIsaNames.size(); ++i)
    if (kIsaNames[i] == name) return static_cast<Isa>(i);
  return std::nullopt;
}

std::string isa_names_help() { return fmt::format("{}", fmt::join(kIsaNames, ", ")); }

Isa host_isa() {
  const CpuFeatures& f = cpu_features();
  if (f.avx512f && f.avx512bw && f.avx512vl) return Isa::avx512;
  if (f.avx2) return Isa::avx2;
  return Isa::scalar;
}

bool isa_supported(Isa isa) { return isa <= host_isa(); }

std::span<const Isa> supported_isas() {
  static const std::vector<Isa> isas = [] {
    std::vector<Isa> v;
    for (std::size_t i = 0; i < kIsaCount; ++i)
      if (isa_supported(static_cast<Isa>(i))) v.push_back(static_cast<Isa>(i));
    return v;
  }();
  return isas;
}

Isa require_isa(Isa isa) {
  if (!isa_supported(isa))
    throw Error(Errc::unsupported, fmt::format("instruction set {} is not available on this CPU (it runs {}: {})",
                                               isa_name(isa), isa_name(host_isa()), isa_description(host_isa())));
  return isa;
}

Isa best_isa() { return isa_override().value_or(host_isa()); }

std::optional<Isa> isa_override() {
  if (const int forced = g_forced.load(); forced >= 0) return static_cast<Isa>(forced);
  return std::nullopt;
}

void force_isa(std::optional<Isa> isa) {
  if (isa) require_isa(*isa);
  g_forced.store(isa ? static_cast<int>(*isa) : -1);
}

std::string isa_description(Isa isa) {
  switch (isa) {
    case Isa::scalar:
      return cpu_features().popcnt ? "scalar (POPCNT)" : "scalar";
    case Isa::avx2:
      return "AVX2";
    case Isa::avx512: {
      std::string s = "AVX-512 (F, BW, VL";
      if (isa_supported(Isa::avx512)) {
        if (cpu_features().avx512vpopcntdq) s += ", VPOPCNTDQ";
        if (cpu_features().avx512bitalg) s += ", BITALG";
      }
      return s + ")";
    }
  }
  return "unknown";
}

}  // namespace dmlbits
