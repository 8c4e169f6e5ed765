// The backend interface. A backend runs a ValidatedOp on buffers laid out as the op's DirectML
// descriptors say (inputs may be smaller than the output and read through stride-0
// dimensions); it never sees an unvalidated operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dmlbits/timing.hpp"
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
  // The same for a run of `op` (one chunk's operation when `pipelined`, a streamed run whose
  // chunks a second thread writes while this one reads and computes): the CPU backend names
  // the threads such a run uses, which are fewer than it may use for small outputs.
  virtual std::string device_description_for(const ValidatedOp& op, bool pipelined) const {
    (void)op;
    (void)pipelined;
    return device_description();
  }
  // nullopt if run() can execute `op`, else the reason it cannot.
  virtual std::optional<std::string> unsupported_reason(const ValidatedOp& op) const = 0;
  // Computes the output. Throws Errc::backend on a device failure.
  virtual void run(const ValidatedOp& op, const ExecuteBuffers& buffers) = 0;
  // Why make_backend() chose this backend ("auto chose cpu: ..."), for -v; empty when the
  // caller named it.
  virtual std::string selection_reason() const { return {}; }
  // The backend's own phases, summed since it was created (device creation, then every run):
  // D3D12 reports device, pipeline, upload, dispatch (GPU timestamps) and readback.
  virtual std::vector<PhaseTime> detail_phases() const { return {}; }
};

struct BackendOptions {
  BackendOptions() = default;
  // BackendOptions{isa}, as before adapters existed.
  explicit BackendOptions(std::string isa_, std::string adapter_ = {}, std::uint64_t size_hint_ = 0)
      : isa(std::move(isa_)), adapter(std::move(adapter_)), size_hint(size_hint_) {}

  std::string isa;      // CPU backends: force this instruction set ("" = the best the CPU has)
  // CPU backends: threads that compute (0 = the default, CpuBackendOptions::threads). 1 also
  // keeps a streamed run's reading and writing on the calling thread (stream_operation).
  unsigned threads = 0;
  std::string adapter;  // d3d12 and auto: an adapter index or name substring ("" = default)
  // auto: bytes of the output the run will produce (0 = unknown, treated as small). Below
  // kAutoGpuMinBytes auto picks the CPU without looking for adapters at all.
  std::uint64_t size_hint = 0;
};

// auto sends outputs of at least this many bytes to a hardware D3D12 adapter, if there is one.
// Below it the CPU wins: creating a vkd3d device alone costs tens of milliseconds
// (testdata/benchmarks.md, "D3D12 start-up").
inline constexpr std::uint64_t kAutoGpuMinBytes = std::uint64_t{16} << 20;

// The most threads BackendOptions::threads may ask for.
inline constexpr unsigned kMaxThreads = 256;

// The values --backend accepts, in help order: auto, cpu, d3d12, directml, cpu-reference.
std::span<const std::string_view> backend_names();
// The backends this build contains, in backend_names()' order without auto: a backend built as a
// stub that only says "not built" (d3d12 without its headers, directml outside Windows) is left
// out. Whether the runtime it loads is present is another matter: describe_devices().
std::vector<std::string_view> built_backends();
// The instruction sets the cpu backend has kernels for (--isa's values), narrowest first,
// whether or not this CPU runs them.
std::vector<std::string_view> isa_names();
// "cpu" (SIMD kernels, cpu_backend.hpp), "cpu-reference" (cpu_reference.hpp), "d3d12"
// (d3d12_backend.hpp), "directml" (Microsoft's DirectML, Windows only: directml_backend.hpp;
// never chosen by auto), or "auto": d3d12 on a hardware adapter when options.size_hint reaches
// kAutoGpuMinBytes (or options.adapter names one), else cpu; selection_reason() says why.
// Throws Errc::usage for an unknown name, adapter or instruction set, or an instruction set
// given to a backend without that choice, Errc::unsupported for an instruction set the CPU
// lacks, Errc::usage for a thread count given to d3d12 or directml or outside 1..kMaxThreads,
// and Errc::backend when d3d12 or directml cannot run here (no runtime, no adapter, no
// DirectML.dll).
std::unique_ptr<Backend> make_backend(std::string_view name, const BackendOptions& options = {});
// Throws make_backend()'s usage errors for `name` and `options` without creating anything, so
// that a command line is refused before its operands are read.
void check_backend_options(std::string_view name, const BackendOptions& options);
// The output bytes of an operation on operands of these dtypes and shapes (NumPy broadcast,
// the widest input dtype), for BackendOptions::size_hint; 0 if the shapes do not broadcast.
std::uint64_t output_size_hint(const std::vector<OperandInfo>& operands);

}  // namespace dmlbits
