// Choosing and creating a backend (the run layer): by BackendKind, never by name.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "run_types.hpp"
#include "validate.hpp"

namespace dmlbits {

struct BackendOptions {
  std::string isa;      // CPU backends: force this instruction set ("" = the best the CPU has)
  // CPU backends: threads that compute (0 = the default, CpuBackendOptions::threads). 1 also
  // keeps a streamed run's reading and writing on the calling thread (stream_operation).
  unsigned threads = 0;
  std::string adapter;  // d3d12 and auto: an adapter index or name substring ("" = default)
  // auto: bytes of the output the run will produce (0 = unknown, treated as small). Below
  // kAutoGpuMinBytes auto picks the CPU without looking for adapters at all.
  std::uint64_t size_hint = 0;
  // auto: bytes the run reads from its inputs (input_size_hint), for the cost of each path.
  std::uint64_t input_bytes_hint = 0;
};

// cpu (SIMD kernels, cpu_backend.hpp), cpu_reference (cpu_reference.hpp), d3d12
// (d3d12_backend.hpp), directml (Microsoft's DirectML, Windows only: directml_backend.hpp;
// never chosen by automatic), or automatic: cpu below kAutoGpuMinBytes of output
// (options.size_hint) unless options.adapter names one, else d3d12 on a hardware adapter only
// where decide_auto (auto_rule.hpp) estimates it faster, else cpu; selection() says
// why. `kind` and `options` must have passed check_backend_options (prepare_request checks a
// request's once, and the run layer builds a backend only from a PreparedRequest): nothing is
// checked again here. Throws Errc::usage for an unknown adapter, Errc::unsupported for an
// instruction set the CPU lacks, and Errc::backend when d3d12 or directml cannot run here (no
// runtime, no adapter, no DirectML.dll).
std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendOptions& options = {});
// The rules for `kind` and `options`, without creating anything, so that a request is refused
// before its operands are read: make_backend()'s precondition. Throws OptionError (options.hpp).
void check_backend_options(BackendKind kind, const BackendOptions& options);
// prepare_request()'s rules for the backend and the options that go with it (instruction set,
// adapter, threads) and the environment variables that stand for them (DMLBITS_ISA,
// DMLBITS_THREADS: checked whatever the backend, unless the option is given, which overrides
// its variable). Throws Errc::usage, or Errc::unsupported for an instruction set this CPU lacks.
// Also `check`'s rule for its command line.
void check_backend_choice(BackendKind kind, const std::string& isa, const std::string& adapter,
                          std::optional<unsigned> threads);
// The output bytes of an operation on operands of these dtypes and shapes (NumPy broadcast,
// the widest input dtype), for BackendOptions::size_hint; 0 if the shapes do not broadcast.
std::uint64_t output_size_hint(const std::vector<OperandInfo>& operands);
// The bytes of the operands themselves (each one's elements times its dtype's size), for
// BackendOptions::input_bytes_hint.
std::uint64_t input_size_hint(const std::vector<OperandInfo>& operands);

}  // namespace dmlbits
