// One operation, as every face asks for it: the command line's operator verbs, the cases of a
// `check` manifest and the Python module each turn their own syntax (argv, JSON, keywords) into
// an OperationRequest and nothing more. prepare_request() is the one place that knows which
// options go together and what their defaults are; run() is the one entry point that executes
// a prepared request, decides whether it streams or runs in memory, and returns one RunResult.
//
// Contract:
// - prepare_request() reads nothing but the request and, once, the environment variables that
//   stand for the options the request leaves (DMLBITS_ISA, DMLBITS_THREADS; nothing downstream
//   reads them again): no operand is opened, no device created. It
//   throws Error(Errc::usage) for a combination a face must refuse before any work (an
//   option's value or combination as an OptionError, which the face words: error.hpp),
//   and Errc::unsupported for an instruction set this CPU lacks.
// - run() accepts only a PreparedRequest. It throws Error as the phases fail (usage for operands
//   read twice from standard input, invalid_input, unsupported, io, backend, interrupted); a file
//   output is then left as it was. It never prints and never exits.
// - Borrowed operands are read in place, never copied, when C-contiguous; they must stay alive
//   and unchanged until run() returns. A result asked for in memory comes back as an owning,
//   64-byte-aligned Tensor that the caller may keep (the Python module hands it to NumPy).
//
// Also here, for every face: the options' values and their parsers (below) and what dmlbits can
// run on (the devices, at the end).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/error.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/tensor.hpp"
#include "dmlbits/timing.hpp"

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

// Operands are Operand values (tensor.hpp): text as on the command line, or a BorrowedTensor
// (a NumPy buffer: dtype, shape, byte strides, data), read in place when C-contiguous.

// Where the result goes.
enum class OutputKind : std::uint8_t {
  automatic,  // the face's default: a file if `path` is set, else JSON on standard output
  file,       // `path` ("-" for standard output), as `format` or from its name
  memory,     // RunResult::result, an owning Tensor
  buffer,     // written into `buffer` (caller memory of the output's dtype and shape)
  none,       // computed and discarded (for timing), or compared by the caller via keep_result
};

struct OperationRequest {
  OpKind op{};
  std::vector<Operand> operands;                // the operator's arity of them
  std::optional<FeatureLevel> level;            // default: newest_feature_level()
  std::optional<DType> dtype;                   // literals and JSON inputs that name none
  std::optional<DType> out_dtype;               // popcount only: UINT8 (default) or UINT32
  std::optional<ShiftOverflow> shift_overflow;  // shl and shr only: default kDefaultShiftOverflow
  bool in_place = false;                        // write over operand A (a file, or a borrowed tensor's memory)

  std::optional<BackendKind> backend;  // default: automatic
  std::string isa;  // CPU backends: this instruction set only ("" = per-operation choice, or DMLBITS_ISA)
  std::optional<std::string> adapter;  // adapter backends: an index or part of a name (present but empty is refused)
  std::optional<unsigned> threads;  // CPU backends: 1..kMaxThreads (default: DMLBITS_THREADS, else the machine's CPUs:
                                    // dmlbits(1), --threads)

  int repeat = 1;             // measured executions (>= 1)
  int warmup = 0;             // unmeasured executions first (>= 0)
  bool explain_only = false;  // stop after validation
  // false: the run measures nothing, for a face that reports no timing (Python without
  // timing=True): RunResult::timing has no phases, backend texts or totals and execute_samples
  // is empty. A small in-memory call then reads no clock. RunHooks::on_validated still gets the
  // backend texts.
  bool timing = true;

  OutputKind output = OutputKind::automatic;
  std::string path;                         // OutputKind::file / automatic
  std::optional<TensorFormat> format;       // default: from the path's extension; "-" and devices: npy
  bool hex = false;                         // JSON output: bit patterns in hex
  std::optional<MutableTensorView> buffer;  // OutputKind::buffer
  bool keep_result = false;                 // also return the result in memory (to compare it with a golden)
};

// A request whose combination rules held and whose defaults are filled: every optional above
// that has a default is set, and the options are resolved into typed values, the environment
// variables that stand for them included (read once, by prepare_request(): a run of this request
// reads the environment no more, so a later change of DMLBITS_ISA or DMLBITS_THREADS leaves it
// as it is). Only prepare_request() makes one.
class PreparedRequest {
 public:
  const OperationRequest& request() const { return r_; }
  BackendKind backend() const { return *r_.backend; }
  FeatureLevel level() const { return *r_.level; }
  ShiftOverflow shift_overflow() const { return *r_.shift_overflow; }
  // The CPU backends' instruction set: the request's isa, else DMLBITS_ISA's (this CPU runs it);
  // none: the host's widest set with the per-operation choice.
  std::optional<InstructionSet> isa() const { return isa_; }
  // The CPU backends' (and the d3d12 backend's copies') thread count: the request's threads, else
  // DMLBITS_THREADS' (1 to kMaxThreads); 0: the machine's default (thread_defaults()).
  unsigned threads() const { return threads_; }

 private:
  friend PreparedRequest prepare_request(OperationRequest request);
  PreparedRequest(OperationRequest r, std::optional<InstructionSet> isa, unsigned threads)
      : r_(std::move(r)), isa_(isa), threads_(threads) {}
  OperationRequest r_;
  std::optional<InstructionSet> isa_;
  unsigned threads_ = 0;
};

// Checks the combination rules and fills the defaults; see the contract at the top.
PreparedRequest prepare_request(OperationRequest request);

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

class ValidatedOp;  // the validated operation (DirectML description, shapes, dtypes)

// What was validated, as plain data for reports (-v, --time, a Python repr).
struct OperationSummary {
  OpKind op{};
  FeatureLevel level;
  DType input_dtype{};
  DType output_dtype{};
  Shape output_shape;
  bool in_place = false;
};
OperationSummary summarize(const ValidatedOp& op);
// The DirectML operator description of `op` as JSON text (what --explain prints), indented by 2.
std::string explain_json(const ValidatedOp& op);

// What a face may watch while run() works.
struct RunHooks {
  // Once the operation is validated and the backend chosen (timing.backend, .device, .selection
  // are set), before any output is created.
  std::function<void(const ValidatedOp&, const RunTiming&)> on_validated;
  // In memory, after execution and before the output is written: the inputs as read (in place,
  // inputs[0] already holds the result). Setting it keeps the run in memory.
  std::function<void(const ValidatedOp&, std::span<const TensorView> inputs)> before_write;
  // A streamed run's progress: elements done of the total; may throw to abort.
  std::function<void(std::uint64_t done, std::uint64_t total)> progress;
  // Per-call cancellation for an in-memory run: when set, the execution is split into chunks of
  // about kInMemoryChunkBytes (where the operation allows it: no axis broadcast) and this is
  // called between chunks and between warm-up and measured executions, never after the last.
  // It may throw (Error(Errc::interrupted), or the face's own exception) to stop the run, which
  // run() then rethrows; the run's own memory is released, a caller's buffer is left partly
  // written. Unlike request_interrupt() (error.hpp), it stops only this call: the Python
  // module checks for Ctrl-C here on the calling thread, leaving other threads' runs alone.
  std::function<void()> between_chunks;
  // OutputKind::memory: the memory of the result, once its dtype and shape are known (after
  // validation, before the execution), from the face's own allocator: the Python module's
  // results are NumPy's arrays, allocated by NumPy as its own results are. The view it returns
  // must have that dtype and shape. RunResult::result then stays empty. May throw, as
  // between_chunks.
  std::function<MutableTensorView(DType, const Shape&)> allocate_result;
};

// The chunk size of an in-memory run with RunHooks::between_chunks: bytes read and written per
// chunk (about 0.1 s of work at a few GB/s, so that an interruption is seen promptly).
inline constexpr std::uint64_t kInMemoryChunkBytes = std::uint64_t{64} << 20;

// Backends kept from one run to the next, so that a face running many small operations (the
// Python module) creates each backend once: a CPU backend's thread pool, a D3D12 device (tens
// of milliseconds). Keyed by what chooses a backend: kind, instruction set and threads as
// prepare_request() resolved them (so a changed DMLBITS_ISA or DMLBITS_THREADS gets a backend
// of its own), adapter, and for automatic whether the output is large (kAutoGpuMinBytes). A
// backend is created as run() would create it and used by in-memory runs only;
// a streamed run makes its own. Not thread-safe: a backend runs one operation at a time, so use
// one cache per thread (the Python module keeps one thread_local). Backends' own phases
// (RunTiming::backend_phases) then add up over the runs that share the backend.
struct CachedBackends;  // (private to the library)
class BackendCache {
 public:
  BackendCache();
  ~BackendCache();
  BackendCache(const BackendCache&) = delete;
  BackendCache& operator=(const BackendCache&) = delete;
  void clear();

 private:
  friend CachedBackends& cached_backends(BackendCache& cache);  // the run layer's
  std::unique_ptr<CachedBackends> impl_;
};

// A small in-memory operation validated once and run again on new operands of the same dtypes
// and shapes, for a face that makes many small calls (the Python module: at 4x4, checking the
// request, choosing the backend and validating cost several times the work).
//
// Contract:
// - plan_operation() makes a plan only for a request that run() has accepted in the same form:
//   it does again what run() does before executing (reading the operands' dtypes and shapes,
//   the backend from `backends`, validation), throwing the same errors, and keeps nothing of a
//   refusal, so every refusal is made and worded afresh by run(). It returns nullopt for a
//   request outside a plan's scope: an operand that is not a C-order, native BorrowedTensor,
//   an output other than memory or buffer, in place, repeat + warmup above 1, timing,
//   explain_only or keep_result. A planned run is not split into chunks and calls no hook:
//   keep plans for small operations (the Python module: results of at most 4096 elements).
// - fits() says whether run() computes what run(request) would for these operands and output:
//   the operands the plan was made for in number, dtype and shape (C order, native) and `out` of
//   the result's dtype and shape, and `variables` (read_option_variables(), of the variables its
//   request left to them) what prepare_request() read for the plan's request. Anything else (a
//   refusal to word) is run()'s. The plan keeps the options its request resolved and reads no
//   environment: the caller reads the variables, once per call (the Python module does, so that
//   a change applies to its next call).
// - run() writes the result of `operands` (which fits() accepted) into `out`. The plan shares
//   its backend with `backends`: use it on the thread that uses that cache, one run at a time.
class OperationPlan {
 public:
  struct Impl;
  explicit OperationPlan(std::unique_ptr<Impl> impl);
  OperationPlan(OperationPlan&&) noexcept;
  OperationPlan& operator=(OperationPlan&&) noexcept;
  ~OperationPlan();

  const ValidatedOp& op() const;
  DType output_dtype() const;
  const Shape& output_shape() const;
  bool fits(std::span<const BorrowedTensor> operands, const MutableTensorView& out,
            const OptionVariables& variables) const;
  void run(std::span<const BorrowedTensor> operands, const MutableTensorView& out) const;

 private:
  std::unique_ptr<Impl> impl_;
};

std::optional<OperationPlan> plan_operation(const PreparedRequest& request, BackendCache& backends);

struct RunResult {
  std::shared_ptr<const ValidatedOp> op;  // describe it with summarize() / explain_json()
  // Consecutive phases adding up to total_seconds: read, backend, validate, [allocate, warmup,]
  // execute, write.
  RunTiming timing;
  std::vector<double> execute_samples;  // seconds, one per measured run
  std::optional<Tensor> result;         // OutputKind::memory (without allocate_result), or keep_result
  bool streamed = false;                // the result went to its file chunk by chunk
  int warmup = 0;                       // the unmeasured executions before the samples
};

// `backends`, when given, supplies (and keeps) the backend of an in-memory run.
RunResult run(const PreparedRequest& request, const RunHooks& hooks = {}, BackendCache* backends = nullptr);

// The run's timing as JSON text indented by 2 with a final newline: what --time-json writes and
// Python's timing=True returns (op, dtype, shape, feature_level, backend, device, selection,
// phases, backend_phases, total_s, execute_bytes, execute_runs, execute_gbps, and execute:
// warmup, samples_s, backend_phases (the measured runs' own, warm-ups left out), stats_s,
// gbps_at_median). The one writer of that format.
std::string timing_json(const RunResult& result);

// --emit-dxdispatch: the operation as a model for Microsoft's DxDispatch tool, to reproduce it on
// real DirectML (lib/src/run/dxdispatch.hpp describes the model). The files for FILE (a
// trailing ".json" is dropped first): FILE.json (the model), FILE-a.npy[, FILE-b.npy] (the
// inputs as dmlbits read them) and FILE-out.npy, which DxDispatch writes, never dmlbits.
struct DxDispatchFiles {
  std::string model;                // FILE.json
  std::vector<std::string> inputs;  // FILE-a.npy[, FILE-b.npy]
  std::string output;               // FILE-out.npy (DxDispatch writes it)
};

// The paths for FILE and an operator of `arity` inputs. Throws Errc::usage for "-" or a FILE
// without a file name ("dir/").
DxDispatchFiles dxdispatch_file_names(const std::string& file, int arity);

// ---- The devices -------------------------------------------------------------------------
// What dmlbits can run on, as data: the CPU backends, the D3D12 runtime with each adapter and the
// device it creates, DirectML (whether DirectML.dll loads, its version, the highest feature level
// its device reports), and what `--backend auto` picks for a large output. The faces format it:
// `dmlbits devices` prints text (app/cmd_devices.cpp), and its --json and Python's
// dmlbits.devices() print devices_json(), the one writer of that document. Both word the data
// with dmlbits/timing.hpp's functions and the two below (auto_large_outputs_text,
// auto_reason_text), so that the text and the JSON say the same.

// "cpu" and "cpu-reference".
struct CpuDevice {
  BackendKind backend{};
  DeviceDescription device;       // the device a run reports (RunTiming::device)
  std::vector<std::string> isas;  // cpu: every instruction set --isa takes on this CPU
  std::string isa;                // cpu: the one a run uses unless told
  unsigned threads = 0;           // cpu: the threads a run uses unless told
  ThreadTeam team;                // cpu: those threads and why (thread_team_reason: "2 CPUs this process may run on")
};

// One D3D12 adapter and the device created on it.
struct AdapterDevice {
  unsigned index = 0;  // what --adapter takes
  std::string name, vendor;
  std::uint32_t vendor_id = 0, device_id = 0;
  std::string type;  // Vulkan's device type; "" where DXGI says nothing
  bool software = false;
  std::uint64_t memory_bytes = 0;
  std::string api, api_version;             // "Vulkan" or "DXGI", and its version
  bool is_default = false;                  // the d3d12 backend's default adapter
  bool has_device = false;                  // a D3D12 device could be created on it
  std::string feature_level, shader_model;  // the device's ("11_0", "5.1")
  std::uint64_t timestamp_frequency = 0;
  bool uma = false, cache_coherent_uma = false;
  std::string error;  // no device: the device's error, or "" where the backend as a whole is unavailable
};

// Why the d3d12 backend cannot run here.
enum class D3d12Unavailable : std::uint8_t {
  none,        // it can
  runtime,     // not built, or its runtime does not load: `detail` says why
  no_adapter,  // no adapter was enumerated: `detail` is the enumeration's error
  no_device,   // no adapter could create a D3D12 device
};

struct D3d12Devices {
  bool built = false;
  bool available = false;                                 // built, the runtime loads and some adapter creates a device
  D3d12Unavailable unavailable = D3d12Unavailable::none;  // not available: why (d3d12_unavailable_text)
  std::string detail;                                     // the runtime's or the enumeration's message
  std::vector<AdapterDevice> adapters;
  double enumeration_s = 0;
  DeviceDescription device;  // available: the default adapter's device as a run reports it (DeviceKind::none if none)
};

struct DirectmlDevice {
  bool built = false, found = false, available = false;
  std::string library, path, version;
  std::optional<FeatureLevel> max_feature_level;
  std::string adapter;       // the D3D12 adapter its device was created on
  std::string reason;        // not found or no device: why
  DeviceDescription device;  // available: its device, with the highest feature level it reports
};

// What `--backend auto` does with an output of kAutoGpuMinBytes or more: cpu, unless its cost
// rule (lib/src/run/auto_rule.hpp) estimates the hardware adapter faster for a typical large
// run (an `and` of two kAutoExampleBytes inputs).
inline constexpr std::uint64_t kAutoExampleBytes = std::uint64_t{256} << 20;
struct AutoDevices {
  std::uint64_t gpu_min_bytes = 0;        // kAutoGpuMinBytes
  std::optional<unsigned> large_adapter;  // where a large output runs: d3d12 on this adapter,
  std::string large_adapter_name;         // or the cpu when none
  // Why: decide_auto's estimate for kAutoExampleBytes on the hardware adapter auto would look
  // at; none when there is no such adapter with a device.
  std::optional<AutoEstimate> estimate;
};
// "no adapter could create a D3D12 device", "no adapter: ...", the runtime's message; "" if available.
std::string d3d12_unavailable_text(const D3d12Devices& d3d12);
// Why an adapter has no device: its own error, else why the backend is unavailable.
std::string adapter_error_text(const D3d12Devices& d3d12, const AdapterDevice& adapter);
// "d3d12 on adapter 0 (NAME)" or "cpu"
std::string auto_large_outputs_text(const AutoDevices& automatic);
// "no hardware adapter", or "an `and` of two 256 MiB inputs: adapter 0 (...) is discrete:
// estimated ... s on d3d12 (...) against ... s on the CPU backend's 2 threads; ..."
std::string auto_reason_text(const AutoDevices& automatic);

struct DeviceList {
  std::vector<CpuDevice> cpu;
  D3d12Devices d3d12;
  DirectmlDevice directml;
  AutoDevices automatic;
};

// Creates (or reuses) a D3D12 device on every adapter, a few tens of milliseconds each. Never
// throws for a missing runtime or a failed device: the list says why.
DeviceList list_devices();

// Releases the GPU devices that runs have left (the D3D12 devices, and under vkd3d the Vulkan
// devices and instances), now. Call it before the process ends, from the thread that ends it,
// after the last run: the CLI's main does, and so does the Python module at interpreter exit.
// Devices are never released otherwise, neither by static destructors nor exit handlers, since a
// Vulkan driver's own exit handler may already have run by then; a device some backend still
// holds at this call (a run on another thread) stays, and is never released. A later run
// creates a device again. Thread-safe; never throws.
void release_gpu_devices();

// `dmlbits devices --json`: {"backends" (those a run can use, each with its "device"), "d3d12",
// "directml", "auto"}, indented, with a final newline.
std::string devices_json(const DeviceList& devices);

// The threads the CPU backend's large runs use by the machine's rule, whatever DMLBITS_THREADS
// says: the CPUs this process may run on (affinity mask, cgroup quota), at most where more stop
// paying. For faces that share them between tasks running at once (dmlbits.dask).
unsigned machine_cpu_threads();

}  // namespace dmlbits
