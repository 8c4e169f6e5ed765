// Instruction sets the CPU backend's kernels are written for, and which of them this CPU runs.
// Detection happens once (glibc's table of the features it found at start-up, else
// __builtin_cpu_supports; both check that the OS saves the wider registers); the choice can be
// lowered, never raised, by a request's instruction set (--isa, DMLBITS_ISA: resolved by
// prepare_request, which hands it to the backend) or by force_isa(), so the portable kernels can
// be run and compared on a machine that has wider ones. An override names the one set whose
// kernels run; without one, the backend follows the per-operation table.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "cpu_features.hpp"

namespace dmlbits {

// Ordered: each set's kernels may use everything of the sets before it.
enum class Isa : std::uint8_t {
  scalar,  // portable C++ loops (the compiler may auto-vectorise them with SSE2)
  avx2,    // AVX2 (256-bit integer vectors)
  avx512,  // AVX-512 F + BW + VL (512-bit vectors, mask registers, 16-bit variable shifts)
};

inline constexpr std::size_t kIsaCount = 3;

// What this CPU (and OS) can run, detected once (the platform layer reads it). The avx512
// popcount kernels use VPOPCNTD/Q and VPOPCNTB/W when present.
using CpuFeatures = X86Features;
const CpuFeatures& cpu_features();

// Who made this CPU, detected on first use (one cpuid, ~11 us under a hypervisor: asked only by
// kernels about to stream a large output, never on a small run's path). The streaming plans
// differ by maker where measurements did (stream_policy.hpp).
using CpuVendor = X86Vendor;
CpuVendor cpu_vendor();
std::string_view cpu_vendor_name(CpuVendor vendor);  // "intel", "amd", "other"

std::string_view isa_name(Isa isa);                   // "scalar", "avx2", "avx512"
std::optional<Isa> parse_isa(std::string_view name);  // the names above, exactly
// "scalar, avx2, avx512", for help texts and messages.
std::string isa_names_help();

// The widest set this CPU runs, ignoring any override.
Isa host_isa();
bool isa_supported(Isa isa);
// Every set this CPU runs, narrowest first (always starts with scalar). For tests.
std::span<const Isa> supported_isas();

// The set force_isa() names (the tests' hook), else nullopt. The environment is not read here:
// DMLBITS_ISA is the request's (prepare_request reads it once and the backend is given it).
std::optional<Isa> isa_override();
// The set the "cpu" backend uses by default: isa_override(), else host_isa(). Without an
// override the backend's kernels follow the per-operation table (kernel_choices(),
// cpu_backend.hpp), which may pick a narrower set's kernel where it is faster; with one, only
// that set's kernels run (narrower ones where it has none).
Isa best_isa();
// Lowers best_isa() to `isa` for the rest of the process (nullopt removes the override).
// Throws Errc::unsupported if this CPU cannot run `isa`.
void force_isa(std::optional<Isa> isa);
// Throws Errc::unsupported, naming the set and the best one available, unless isa_supported().
Isa require_isa(Isa isa);

// For -v and timing reports: "AVX2", "AVX-512 (F, BW, VL, VPOPCNTDQ)", "scalar".
std::string isa_description(Isa isa);

}  // namespace dmlbits
