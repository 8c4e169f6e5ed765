// The backend interface. A backend runs a ValidatedOp on buffers laid out as the op's DirectML
// descriptors say (inputs may be smaller than the output and read through stride-0
// dimensions); it never sees an unvalidated operation.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/validate.hpp"

namespace dmlbits {

struct ExecuteBuffers {
  // One per input, each at least desc().inputs[i].total_bytes long (rounded down to whole
  // elements: dmlbits' own tensors are not padded to 4 bytes).
  std::vector<std::span<const std::byte>> inputs;
  // desc().output's elements, packed. May be the same memory as inputs[0] when in_place().
  std::span<std::byte> output;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Which device or implementation runs the op, for -v and timing reports.
  virtual std::string device_description() const = 0;
  // nullopt if run() can execute `op`, else the reason it cannot.
  virtual std::optional<std::string> unsupported_reason(const ValidatedOp& op) const = 0;
  // Computes the output. Throws Errc::backend on a device failure.
  virtual void run(const ValidatedOp& op, const ExecuteBuffers& buffers) = 0;
};

struct BackendOptions {
  std::string isa;  // CPU backends: force this instruction set ("" = the best the CPU has)
};

// The values --backend accepts, in help order.
std::span<const std::string_view> backend_names();
// "cpu" (SIMD kernels, cpu_backend.hpp) or "cpu-reference" (cpu_reference.hpp). Throws
// Errc::usage for an unknown name or instruction set, or one given to cpu-reference, and
// Errc::unsupported for an instruction set the CPU lacks.
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options = {});

}  // namespace dmlbits
