// The fast CPU backend ("cpu"): the operators as SIMD kernels over contiguous runs, chosen at
// run time for the instruction sets this CPU has (cpu_isa.hpp). Results are byte for byte those
// of CpuReferenceBackend, which the tests check for every kernel.
//
// Kernels are keyed by (operator, input width, output width, instruction set, operand layout)
// and named as in XNNPACK: x<bits>_<op>[_c|_rc]__<isa>, e.g. "x32_shl__avx2" (A and B both runs),
// "x32_shl_c__avx2" (B is one element repeated: a constant), "x32_shl_rc__avx2" (A is the
// constant), "x16_popcnt_u8__avx2" (16-bit elements counted into uint8). Variants that need an
// extension beyond their set say so in place of the set: "x32_popcnt_u32__avx512vpopcntdq",
// "x64_popcnt_u8__scalar_popcnt".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "backend.hpp"
#include "cpu_isa.hpp"
#include "thread_rule.hpp"

namespace dmlbits {

// ---- Kernel table -------------------------------------------------------------------------

struct KernelParams {
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
  // Binary SIMD kernels whose output is at least this many bytes write it with non-temporal
  // stores, past the caches (as memcpy does for large copies). Tests lower it to cover that path.
  std::size_t stream_min_bytes = std::size_t{8} << 20;
  // The CPU maker whose streaming plan a unary kernel follows (stream_policy.hpp); unset: this
  // CPU's (cpu_vendor()). Tests set it to run every maker's plan on any host.
  std::optional<CpuVendor> vendor = std::nullopt;
};

// Computes n elements. a, b and out need no alignment; out may be the same memory as a (in
// place) where the operation allows it (OpInfo::allows_in_place: never for popcount, whose
// narrowing kernels rely on that), and must not otherwise overlap a or b. Unary kernels ignore
// b. For Operands::b_scalar, b points at one element used for every position (a at one element
// for a_scalar).
using KernelFn = void (*)(std::size_t n, const void* a, const void* b, void* out, const KernelParams& params);

enum class Operands : std::uint8_t {
  vectors,   // A and B both advance (and unary kernels)
  b_scalar,  // B is one element broadcast over the run
  a_scalar,  // A is one element broadcast over the run
};
inline constexpr std::size_t kOperandsCount = 3;

// A CPU extension a kernel needs besides its instruction set.
enum class CpuExtension : std::uint8_t { none, popcnt, avx512vpopcntdq, avx512bitalg };

struct KernelInfo {
  OpKind op{};
  unsigned width = 0;      // input element size in bytes: 1, 2, 4, 8
  unsigned out_width = 0;  // output element size: the input's, or popcount's 1 or 4
  Operands operands{};
  Isa isa{};
  CpuExtension extension = CpuExtension::none;
  KernelFn fn = nullptr;
  const char* tag = "";  // the name's part after "__": "avx2", "scalar_popcnt"
};

// A kernel's name, "x32_shl_c__avx2": for tests, benchmarks and messages. Composed when asked:
// formatting every row's name at a run's first dispatch was a quarter of a 1 KiB run's
// instructions (testdata/benchmarks.md, "Fifth pass").
std::string kernel_name(const KernelInfo& k);

// The operation part of a kernel's name: the table's kernel_name, plus the output type where
// it is not the input's ("and", "popcnt_u8").
std::string kernel_op_name(OpKind op, unsigned out_width);

// Every kernel compiled in, including those this CPU cannot run.
std::span<const KernelInfo> kernel_table();
// Whether this CPU has the kernel's instruction set and extension.
bool kernel_runnable(const KernelInfo& k);

// The key of the kernel choice tables (kernel_table.cpp): one slot per (operator, input width,
// output width, operand layout) and instruction set, dense, so that finding a run's kernel is an
// index. Sized from kOpCount: a new operator has its slots.
inline constexpr std::size_t kKernelWidths = 4;  // 1, 2, 4 and 8 bytes, in and out
inline constexpr std::size_t kKernelKeys = kOpCount * kKernelWidths * kKernelWidths * kOperandsCount;
// The slot of a key, below kKernelKeys; kKernelKeys for what is no kernel's key (a width other
// than 1, 2, 4 or 8, a value past the enums).
constexpr std::size_t kernel_key(OpKind op, unsigned width, unsigned out_width, Operands operands) {
  const auto log2 = [](unsigned w) -> std::size_t {
    return w == 1 ? 0 : w == 2 ? 1 : w == 4 ? 2 : w == 8 ? 3 : kKernelWidths;
  };
  const auto o = static_cast<std::size_t>(op);
  const std::size_t w = log2(width);
  const std::size_t ow = log2(out_width);
  if (o >= kOpCount || w == kKernelWidths || ow == kKernelWidths ||
      static_cast<std::size_t>(operands) >= kOperandsCount)
    return kKernelKeys;
  return ((o * kKernelWidths + w) * kKernelWidths + ow) * kOperandsCount + static_cast<std::size_t>(operands);
}

// The lookups below read tables filled once, with the kernel table, from its rows and this CPU's
// features; keys that are no kernel's (kernel_key), and sets past Isa's values, have none.
// The preferred runnable kernel of exactly `isa`, or nullptr (no kernel of that set, or the
// CPU cannot run it). Unary operations exist only with Operands::vectors.
const KernelInfo* lookup_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands);
// lookup_kernel() at `isa`, else at each narrower set in turn; nullptr when no set has one (an
// operator may ship with only its reference function: CpuBackend then runs that).
const KernelInfo* select_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands);

// The per-operation choice: on a backend whose widest set is `host`, (op, width, out_width)
// runs the kernel named by `tag` ("avx2", "avx512vpopcntdq"...) instead of the widest set's,
// because it measured faster on such a host, in the caches and in memory (the figures:
// testdata/benchmarks.md, "Kernel choice per operation"). The rows live in one table
// (kernel_table.cpp) and apply to every operand layout of the operation.
struct KernelChoice {
  OpKind op;
  unsigned width;
  unsigned out_width;
  Isa host;
  const char* tag;
};
std::span<const KernelChoice> kernel_choices();
// The kernel the backend runs for a set `isa` reached without an override: the table's choice
// if a row names (op, width, out_width, isa) and this CPU runs its kernel (the first such row),
// else select_kernel().
const KernelInfo* dispatch_kernel(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands);

// ---- Backend ------------------------------------------------------------------------------

struct CpuBackendOptions {
  unsigned threads = 0;  // 0: the default, cpu_threads(0)
  // Tensors whose output (or input A) has fewer bytes than this run on the calling thread, and
  // larger ones on at most one thread per half of it (cpu_thread_rule).
  std::size_t parallel_min_bytes = kParallelMinBytes;
};

class CpuBackend final : public Backend {
 public:
  // With a set (the request's --isa or DMLBITS_ISA), only that set's kernels run (select_kernel:
  // narrower sets' where it has none); throws Errc::unsupported if this CPU cannot run it.
  // Without one, force_isa()'s set runs the same way (isa_override()), else the host's widest
  // set with the per-operation table (dispatch_kernel). `options.threads` is the resolved count
  // (0: the machine's). Reads no environment.
  explicit CpuBackend(std::optional<Isa> isa = std::nullopt, CpuBackendOptions options = {});

  std::string_view name() const override { return "cpu"; }
  bool computes_on_cpu() const override { return true; }
  // As device_text words it: "CPU, AVX2 kernels, 2 threads".
  DeviceDescription device_description() const override;
  // "CPU, AVX2 kernels, 1 of 2 threads (outputs under 4 MiB run on one)";
  // "CPU, AVX2 kernels, 1 of 2 threads (<why>)" when that is given and one is used;
  // "CPU, AVX2 kernels, 2 threads (<why>)" (or "2 of 4 threads (...)") when streamed with
  // extra threads beside the computing one; "3 of 8 threads (one per 2 MiB of output)" for an
  // output too small for every thread.
  DeviceDescription device_description_for(const ValidatedOp& op, unsigned extra_threads,
                                           const ThreadWhy& why = {}) const override;
  std::optional<std::string> unsupported_reason(const ValidatedOp&) const override { return std::nullopt; }
  // Its threads and what held them (thread_team_text: "2 threads: 2 CPUs this process may run
  // on"), for -v and `devices`.
  ThreadTeam thread_team() const override;
  // The threads a run of `work_bytes` (the wider of its output and input bytes) computes on
  // when the budget has them all (ThreadLease): cpu_thread_rule's `threads`.
  ThreadCount thread_count(std::uint64_t work_bytes) const;
  // Collapses the output into an outer loop over contiguous inner runs; each input's inner run
  // is contiguous or one broadcast element, which picks the kernel. Other layouts (never made
  // by validate()) go through the reference backend.
  void run(const ValidatedOp& op, const ExecuteBuffers& buffers) override;
  // run()'s layout plan and kernel for `op`, chosen once, for runs on the calling thread: none
  // (nullptr) where run() would use threads for its size or the reference.
  std::unique_ptr<PreparedRun> prepare_run(const ValidatedOp& op) const override;
  // A flat graph of two or more nodes (fuses()) in one pass over tiles that stay in the caches
  // (fused.hpp), on the threads run() would take for the graph's bytes; any other graph node
  // by node through run() (cpu_graph.cpp).
  void run_graph(const ValidatedGraph& graph, const GraphBuffers& buffers) override;
  static bool fuses(const ValidatedGraph& graph);

  Isa isa() const { return isa_; }
  // Whether kernels follow the per-operation table (no set was named).
  bool per_operation_choice() const { return per_operation_choice_; }
  unsigned threads() const { return threads_; }

 private:
  Isa isa_;
  bool per_operation_choice_;
  unsigned threads_;
  bool default_threads_;  // threads_ is the machine's default: runs lease from the budget
  std::size_t parallel_min_bytes_;
};

}  // namespace dmlbits
