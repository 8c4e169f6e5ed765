#include "cpu_isa.hpp"

#include <array>
#include <atomic>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

// glibc 2.33 and later publish the CPU features they detected at start-up. Their header is C
// (it uses _Bool), which g++ accepts and clang++ does not: clang builds (fuzzing) use libgcc's.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__has_include) && !defined(__clang__)
#if __has_include(<sys/platform/x86.h>)
#include <sys/platform/x86.h>
#define DMLBITS_GLIBC_X86_FEATURES 1
#endif
#endif
#ifndef DMLBITS_GLIBC_X86_FEATURES
#define DMLBITS_GLIBC_X86_FEATURES 0
#endif

namespace dmlbits {
namespace {

constexpr std::array<std::string_view, kIsaCount> kIsaNames{"scalar", "avx2", "avx512"};

CpuFeatures detect() {
  CpuFeatures f;
#if DMLBITS_GLIBC_X86_FEATURES
  // glibc has already run cpuid (and checked XCR0, so "active" means the OS saves the wider
  // registers) for its own string functions; reading its table costs nothing. libgcc's
  // __builtin_cpu_init would run cpuid again, about a dozen times, and on a virtual machine
  // every cpuid exits to the hypervisor (11 us each measured here), a visible part of a small
  // run's start-up. Not calling it also keeps libgcc's detection constructor out of the program.
  f.popcnt = CPU_FEATURE_ACTIVE(POPCNT);
  f.avx2 = CPU_FEATURE_ACTIVE(AVX2);
  f.avx512f = CPU_FEATURE_ACTIVE(AVX512F);
  f.avx512bw = CPU_FEATURE_ACTIVE(AVX512BW);
  f.avx512vl = CPU_FEATURE_ACTIVE(AVX512VL);
  f.avx512vpopcntdq = CPU_FEATURE_ACTIVE(AVX512_VPOPCNTDQ);
  f.avx512bitalg = CPU_FEATURE_ACTIVE(AVX512_BITALG);
#elif defined(__x86_64__) || defined(__i386__)
  // libgcc's tables are filled by a constructor; calling the init first makes detection safe
  // even from other static initialisers.
  __builtin_cpu_init();
  f.popcnt = __builtin_cpu_supports("popcnt");
  f.avx2 = __builtin_cpu_supports("avx2");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512vpopcntdq = __builtin_cpu_supports("avx512vpopcntdq");
  f.avx512bitalg = __builtin_cpu_supports("avx512bitalg");
#endif
  return f;
}

// -1: no override; else the Isa's value.
std::atomic<int> g_forced{-1};

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
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

Isa best_isa() {
  if (const int forced = g_forced.load(); forced >= 0) return static_cast<Isa>(forced);
  const char* env = std::getenv("DMLBITS_ISA");
  if (env == nullptr || *env == '\0') return host_isa();
  const auto isa = parse_isa(env);
  if (!isa)
    throw Error(Errc::usage, fmt::format("DMLBITS_ISA: unknown instruction set '{}' (known: {})", env, isa_names_help()));
  try {
    return require_isa(*isa);
  } catch (const Error& e) {
    rethrow_with_context(e, "DMLBITS_ISA");
  }
}

void force_isa(std::optional<Isa> isa) {
  if (isa) require_isa(*isa);
  g_forced.store(isa ? static_cast<int>(*isa) : -1);
}

std::string isa_description(Isa isa) {
  switch (isa) {
    case Isa::scalar: return cpu_features().popcnt ? "scalar (POPCNT)" : "scalar";
    case Isa::avx2: return "AVX2";
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
