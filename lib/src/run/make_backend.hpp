// Choosing and creating a backend (the run layer): by BackendKind, never by name.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "cpu_isa.hpp"
#include "run_types.hpp"
#include "validate.hpp"

namespace dmlbits {

class PreparedRequest;
enum class InstructionSet : std::uint8_t;  // dmlbits/request.hpp

// The public InstructionSet and the CPU layer's Isa, one for one.
std::optional<Isa> to_isa(std::optional<InstructionSet> isa);
std::optional<InstructionSet> to_instruction_set(std::optional<Isa> isa);

// The CPU backends' choices resolved: the options where given, else the environment variables
// that stand for them.
struct CpuChoice {
  std::optional<Isa> isa;  // none: the host's widest set with the per-operation choice
  unsigned threads = 0;    // 0: the machine's default
};

// The backend `request` asks for (its backend, isa, threads and adapter), for operands of these
// dtypes and shapes: cpu (SIMD kernels, cpu_backend.hpp), cpu_reference (cpu_reference.hpp),
// d3d12 (d3d12_backend.hpp), directml (Microsoft's DirectML, Windows only: directml_backend.hpp;
// never chosen by automatic), or automatic: cpu below kAutoGpuMinBytes of output unless the
// request names an adapter, else d3d12 on a hardware adapter only where decide_auto
// (auto_rule.hpp) estimates it faster for the bytes the operands read and the output writes,
// else cpu; selection() says why. No operands: the sizes are unknown, and count as small. The
// request's choices passed check_backend_choice when prepare_request made it (the type is the
// proof): nothing is checked again here, and no environment is read. Throws Errc::usage for an unknown adapter,
// Errc::unsupported for an instruction set the CPU lacks, and Errc::backend when d3d12 or
// directml cannot run here (no runtime, no adapter, no DirectML.dll).
std::unique_ptr<Backend> make_backend(const PreparedRequest& request, const std::vector<OperandInfo>& operands = {});
// prepare_request()'s rules for the backend and the options that go with it (instruction set,
// adapter, threads) and the environment variables that stand for them (DMLBITS_ISA,
// DMLBITS_THREADS: checked whatever the backend, unless the option is given, which overrides
// its variable), without creating anything, so that a request is refused before its operands
// are read. Returns the choices resolved. Throws OptionError (Errc::usage), or
// Errc::unsupported for an instruction set this CPU lacks. Also `check`'s rule for its command
// line. Reads DMLBITS_ISA and DMLBITS_THREADS once, through read_option_variables() (none where
// both options are given).
CpuChoice check_backend_choice(BackendKind kind, const std::string& isa, const std::string& adapter,
                               std::optional<unsigned> threads);
// How many times read_option_variables() (request.hpp) has read the two variables on this
// thread: the tests' hook for "read once per request".
std::uint64_t option_variable_reads();
// The output bytes of an operation on operands of these dtypes and shapes (NumPy broadcast,
// the widest input dtype), what automatic weighs; 0 if the shapes do not broadcast.
std::uint64_t output_size_hint(const std::vector<OperandInfo>& operands);
// The bytes of the operands themselves (each one's elements times its dtype's size).
std::uint64_t input_size_hint(const std::vector<OperandInfo>& operands);

}  // namespace dmlbits
