// The options' values, as every face gives them: the backends, the instruction sets, the
// thread counts, and one parser per kind of option value, and the environment variables that
// stand for the CPU options (DMLBITS_ISA, DMLBITS_THREADS), read once per request.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/dtype.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits {

// ---- The options' values -----------------------------------------------------------------
// Option words parsed once: one parser per kind of option value, each over its kind's own table
// (backend_kinds(), dtype_table(), feature_levels(), shift_overflow_modes(), isa_names()) and
// one check per numeric rule. Every face calls these: the command line as CLI11 checks
// (app/option_errors.cpp), `check` manifests for their keys, the Python module for its keywords.
//
// Contract: each returns the value's type or throws OptionError (error.hpp), Errc::usage,
// naming the option by OptionKey and never in a face's words; the face renders it.
// The backend table is here too.

// The backends, in --help order. Chosen by this enum everywhere; the names are for faces only.
enum class BackendKind : std::uint8_t {
  automatic,      // "auto": cpu, or from kAutoGpuMinBytes of output d3d12 where estimated faster (auto_rule.hpp)
  cpu,            // "cpu": the SIMD kernels
  d3d12,          // "d3d12": compute shaders on a D3D12 device (vkd3d on Linux)
  directml,       // "directml": Microsoft's DirectML (Windows only; never chosen by automatic)
  cpu_reference,  // "cpu-reference": the scalar reference, the executable spec
};
std::span<const BackendKind> backend_kinds();
std::string_view backend_name(BackendKind kind);
std::optional<BackendKind> parse_backend(std::string_view name);
// Whether the backend computes on CPU threads (--threads, --isa apply) or on an adapter
// (--adapter applies). automatic is both.
bool backend_uses_cpu(BackendKind kind);
bool backend_uses_adapter(BackendKind kind);
// The names of the backends that take an adapter, auto last (it takes one for the d3d12 backend
// it may choose): "d3d12", "directml", "auto".
std::vector<std::string> adapter_backend_names();
// The backends this build contains, in backend_kinds()' order without automatic: a backend built
// as a stub that only says "not built" (d3d12 without its headers, directml outside Windows) is
// left out. Whether the runtime it loads is present is another matter: the devices, below.
std::vector<BackendKind> built_backends();
// The instruction sets the cpu backend has kernels for (--isa's values), narrowest first,
// whether or not this CPU runs them.
std::vector<std::string_view> isa_names();
// The same sets as values, in isa_names()' order: the typed form of a request's instruction set
// once prepare_request() has resolved it (PreparedRequest::isa()).
enum class InstructionSet : std::uint8_t {
  scalar,  // "scalar": portable loops
  avx2,    // "avx2"
  avx512,  // "avx512": AVX-512 F, BW, VL
};
std::string_view instruction_set_name(InstructionSet isa);

// auto considers a hardware D3D12 adapter for outputs of at least this many bytes, if there is
// one, and takes it where its estimated time is below the CPU's (lib/src/run/auto_rule.hpp).
// Below it the CPU wins without looking: creating a vkd3d device alone costs tens of
// milliseconds (testdata/benchmarks.md, "D3D12 start-up").
inline constexpr std::uint64_t kAutoGpuMinBytes = std::uint64_t{16} << 20;
// The most threads a request may ask for.
inline constexpr unsigned kMaxThreads = 256;
// The default thread count's rule (dmlbits(1), --threads), as data for help texts: the CPUs this
// process may run on, at most `most` for the SIMD kernels and `most_scalar` for the scalar ones
// (the memory saturates at about that many cores), and one thread for runs of under
// `parallel_min_bytes` (the wider of output and input).
struct ThreadDefaults {
  unsigned most = 0;
  unsigned most_scalar = 0;
  std::uint64_t parallel_min_bytes = 0;
};
ThreadDefaults thread_defaults();

// --backend: a name of backend_kinds() ("auto", "cpu-reference").
BackendKind parse_backend_option(std::string_view text);
// --dtype and --out-dtype (`key`): any spelling parse_dtype_name() takes ("uint8", "u1", "UINT8").
DType parse_dtype_option(std::string_view text, OptionKey key = OptionKey::dtype);
// --feature-level: "4_1", "4.1" or "DML_FEATURE_LEVEL_4_1" of a level feature_levels() holds.
FeatureLevel parse_feature_level_option(std::string_view text);
// --shift-overflow: a name of shift_overflow_modes().
ShiftOverflow parse_shift_overflow_option(std::string_view text);
// --isa: a name of isa_names(), returned as the table spells it (whether this CPU runs it is
// prepare_request()'s question: Errc::unsupported).
std::string parse_isa_option(std::string_view text);
// --threads as text: a whole number from 1 to kMaxThreads (OptionRule::not_a_count).
unsigned parse_threads_option(std::string_view text);
// A thread count given as a number: 1 to kMaxThreads (OptionRule::zero, above_maximum).
unsigned check_threads_option(unsigned threads);
// --repeat at least 1 and --warmup at least 0 (OptionRule::too_few).
void check_repeat_option(int repeat, int warmup);
// --adapter: an index or part of a name, so not empty (OptionRule::empty).
void check_adapter_option(std::string_view adapter);

// The names an option of a table takes, in the table's order (the default first where the
// table says so), for help, completion and OptionError::choices(); empty for other options.
std::vector<std::string> option_choices(OptionKey key);

// The environment variables that stand for the CPU options a request leaves, parsed: what
// prepare_request() resolves them to.
struct OptionVariables {
  std::optional<InstructionSet> isa;  // DMLBITS_ISA's set; none where it is unset or empty (or not read)
  unsigned threads = 0;               // DMLBITS_THREADS' count; 0 where it is unset or empty (or not read)
  bool operator==(const OptionVariables&) const = default;
};
// Reads DMLBITS_ISA (where `isa`) and DMLBITS_THREADS (where `threads`) now: the library's one
// reader of the two, which prepare_request() calls once for the options its request leaves (and
// nothing after it reads them again). For a face that runs an OperationPlan again without
// preparing a request (OperationPlan::fits). Throws as prepare_request() refuses their values:
// Errc::usage for a value that is no instruction set or thread count from 1 to kMaxThreads,
// Errc::unsupported for a set this CPU lacks.
OptionVariables read_option_variables(bool isa = true, bool threads = true);

}  // namespace dmlbits
