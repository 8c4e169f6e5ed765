#include "cpu_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <array>
#include <memory>

#include <fmt/format.h>

#include "dmlbits/dtype.hpp"
#include "cpu_reference.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"

namespace dmlbits {
namespace {

// The output's dimensions with size-1 dimensions dropped and neighbours merged wherever every
// tensor steps through them as through one dimension; the last one is the inner run.
struct Plan {
  std::size_t rank = 0;
  std::size_t tensors = 0;  // output, then the inputs
  std::array<std::uint64_t, kMaxRank> sizes{};
  std::array<std::array<std::uint64_t, kMaxRank>, 3> strides{};  // [tensor][dimension]
};

const DmlTensorDesc& tensor(const DmlOperatorDesc& d, std::size_t t) { return t == 0 ? d.output : d.inputs[t - 1]; }

Plan make_plan(const DmlOperatorDesc& d) {
  Plan p;
  p.tensors = 1 + d.inputs.size();
  for (std::size_t k = 0; k < d.output.sizes.size(); ++k) {
    const std::uint64_t size = d.output.sizes[k];
    if (size == 1) continue;
    bool merge = p.rank > 0;
    for (std::size_t t = 0; merge && t < p.tensors; ++t)
      merge = p.strides[t][p.rank - 1] == tensor(d, t).strides[k] * size;
    if (!merge) ++p.rank;
    p.sizes[p.rank - 1] = merge ? p.sizes[p.rank - 1] * size : size;
    for (std::size_t t = 0; t < p.tensors; ++t) p.strides[t][p.rank - 1] = tensor(d, t).strides[k];
  }
  if (p.rank == 0) {  // one element
    p.rank = 1;
    p.sizes[0] = 1;
    for (std::size_t t = 0; t < p.tensors; ++t) p.strides[t][0] = 1;
  }
  return p;
}

struct Job {
  const Plan* plan;
  KernelFn fn;
  KernelParams params;
  std::array<const std::byte*, 2> in{};
  std::size_t in_size;  // bytes per input element
  std::byte* out;
  std::size_t out_size;
};

// Output elements [begin, end) in row-major order, one kernel call per (part of an) inner run.
void run_range(const Job& job, std::uint64_t begin, std::uint64_t end) {
  const Plan& p = *job.plan;
  const std::size_t inner_dim = p.rank - 1;
  const std::uint64_t inner = p.sizes[inner_dim];
  const std::size_t n_in = p.tensors - 1;

  // Position of `begin`: outer multi-index, and each input's element offset of its run start.
  std::array<std::uint64_t, kMaxRank> idx{};
  std::uint64_t outer = begin / inner;
  std::uint64_t skip = begin % inner;
  for (std::size_t k = inner_dim; k-- > 0;) {
    idx[k] = outer % p.sizes[k];
    outer /= p.sizes[k];
  }
  std::array<std::uint64_t, 2> base{};
  for (std::size_t i = 0; i < n_in; ++i)
    for (std::size_t k = 0; k < inner_dim; ++k) base[i] += idx[k] * p.strides[i + 1][k];

  std::uint64_t pos = begin;
  while (pos < end) {
    const std::uint64_t n = std::min(inner - skip, end - pos);
    std::array<const std::byte*, 2> ptr{};
    for (std::size_t i = 0; i < n_in; ++i)
      ptr[i] = job.in[i] + (base[i] + skip * p.strides[i + 1][inner_dim]) * job.in_size;
    job.fn(static_cast<std::size_t>(n), ptr[0], ptr[1], job.out + pos * job.out_size, job.params);
    pos += n;
    skip = 0;
    // Next outer index (an odometer over the outer dimensions).
    for (std::size_t k = inner_dim; k-- > 0;) {
      for (std::size_t i = 0; i < n_in; ++i) base[i] += p.strides[i + 1][k];
      if (++idx[k] < p.sizes[k]) break;
      for (std::size_t i = 0; i < n_in; ++i) base[i] -= p.strides[i + 1][k] * p.sizes[k];
      idx[k] = 0;
    }
  }
}

// Bytes the descriptor reads from a buffer: up to and including its last element.
std::uint64_t extent_bytes(const DmlTensorDesc& t, std::size_t element_size) {
  std::uint64_t last = 0;
  for (std::size_t k = 0; k < t.sizes.size(); ++k) last += (t.sizes[k] - 1) * t.strides[k];
  return (last + 1) * element_size;
}

}  // namespace

namespace {

CpuMachine machine_for(Isa isa) {
  CpuMachine m = this_machine();
  m.isa = isa;
  return m;
}

}  // namespace

CpuBackend::CpuBackend(std::optional<Isa> isa, CpuBackendOptions options)
    : isa_(isa ? require_isa(*isa) : best_isa()),
      per_operation_choice_(!isa && !isa_override()),
      threads_(cpu_threads(options.threads, isa_)),
      default_threads_(cpu_threads_are_default(options.threads)),
      parallel_min_bytes_(options.parallel_min_bytes) {}

ThreadCount CpuBackend::thread_count(std::uint64_t work_bytes) const {
  return cpu_thread_rule(machine_for(isa_), work_bytes, threads_, parallel_min_bytes_);
}

ThreadTeam CpuBackend::thread_team() const {
  const CpuMachine m = machine_for(isa_);
  if (!default_threads_) return {.threads = threads_, .limit = ThreadLimit::requested};
  return thread_team_of(m, cpu_thread_rule(m, UINT64_MAX));
}

DeviceDescription CpuBackend::device_description() const {
  return {.kind = DeviceKind::cpu,
          .isa = isa_description(isa_),
          .narrower_per_operation =
              per_operation_choice_ && std::any_of(kernel_choices().begin(), kernel_choices().end(),
                                                   [&](const KernelChoice& c) { return c.host == isa_; }),
          .threads = threads_};
}

DeviceDescription CpuBackend::device_description_for(const ValidatedOp& op, unsigned extra_threads,
                                                     const ThreadWhy& why) const {
  // run()'s split: an output under parallel_min_bytes_ is computed on one thread, a larger one
  // on at most one per half of it.
  const std::uint64_t work_bytes = op.output_shape().element_count() *
                                   std::max(dtype_info(op.input_dtype()).size, dtype_info(op.output_dtype()).size);
  const unsigned computing = thread_count(work_bytes).threads;
  const bool streamed = extra_threads > 0;
  DeviceDescription d = device_description();
  d.used = std::min(threads_, computing + extra_threads);
  if (d.used != threads_ || (streamed && why.use != ThreadUse::plain))
    d.why = why.use != ThreadUse::plain ? why
            : streamed                  ? ThreadWhy{ThreadUse::pipeline}
            : computing > 1             ? ThreadWhy{ThreadUse::per_size, parallel_min_bytes_ / 2}
                                        : ThreadWhy{ThreadUse::small_output, parallel_min_bytes_};
  return d;
}

namespace {

// What run() decides from the operation alone: the loop over its layout and the kernel (nullptr:
// the reference runs it).
struct Choice {
  Plan plan;
  const KernelInfo* kernel = nullptr;
  std::size_t in_size = 0, out_size = 0;  // bytes per element
};

Choice choose(const DmlOperatorDesc& d, std::size_t in_size, std::size_t out_size, Isa isa, bool per_operation_choice) {
  Choice c{make_plan(d), nullptr, in_size, out_size};
  const Plan& plan = c.plan;
  const std::size_t inner_dim = plan.rank - 1;
  const bool single = plan.sizes[inner_dim] == 1;
  // Each input's inner run must be contiguous or one repeated element, and the output packed;
  // other layouts (never produced by validate()) take the reference's general loop.
  bool vector_layout = d.output.is_packed();
  std::array<bool, 2> repeated{};
  for (std::size_t i = 0; i < d.inputs.size(); ++i) {
    const std::uint64_t s = plan.strides[i + 1][inner_dim];
    vector_layout = vector_layout && (single || s <= 1);
    repeated[i] = !single && s == 0;
  }
  if (repeated[0] && (d.inputs.size() == 1 || repeated[1])) vector_layout = false;
  const Operands operands = repeated[0] ? Operands::a_scalar : repeated[1] ? Operands::b_scalar : Operands::vectors;
  // An operator without kernels for this layout (SIMD kernels are optional) runs as the reference.
  const auto width = static_cast<unsigned>(in_size);
  const auto out_width = static_cast<unsigned>(out_size);
  c.kernel = !vector_layout         ? nullptr
             : per_operation_choice ? dispatch_kernel(d.op, width, out_width, isa, operands)
                                    : select_kernel(d.op, width, out_width, isa, operands);
  return c;
}

Job job_of(const Choice& c, const DmlOperatorDesc& d, const std::byte* const* inputs, std::byte* output) {
  Job job{};
  job.plan = &c.plan;
  job.fn = c.kernel->fn;
  job.params.shift_overflow = d.shift_overflow;
  for (std::size_t i = 0; i < d.inputs.size(); ++i) job.in[i] = inputs[i];
  job.in_size = c.in_size;
  job.out = output;
  job.out_size = c.out_size;
  return job;
}

// run() on the calling thread with its choice made: a kept plan's call (prepare_run).
class CpuPreparedRun final : public PreparedRun {
 public:
  CpuPreparedRun(Choice choice, const DmlOperatorDesc& d, std::uint64_t total)
      : choice_(std::move(choice)), inputs_(d.inputs.size()), total_(total) {
    job_ = job_of(choice_, d, std::array<const std::byte*, 2>{}.data(), nullptr);
  }
  CpuPreparedRun(const CpuPreparedRun&) = delete;  // job_ points into choice_
  CpuPreparedRun& operator=(const CpuPreparedRun&) = delete;
  void run(std::span<const std::byte* const> inputs, std::byte* output) const override {
    // One inner run (whatever the operands' layout: a vector's stride is 1, a repeated
    // element's 0) is one kernel call from the buffers' starts, as run_range makes it.
    if (choice_.plan.rank == 1) {
      job_.fn(static_cast<std::size_t>(total_), inputs[0], inputs_ > 1 ? inputs[1] : nullptr, output, job_.params);
      return;
    }
    Job job = job_;
    for (std::size_t i = 0; i < inputs_; ++i) job.in[i] = inputs[i];
    job.out = output;
    run_range(job, 0, total_);
  }

 private:
  Choice choice_;
  std::size_t inputs_;
  std::uint64_t total_;
  Job job_{};  // the buffers' pointers left empty
};

}  // namespace

std::unique_ptr<PreparedRun> CpuBackend::prepare_run(const ValidatedOp& op) const {
  const DmlOperatorDesc& d = op.desc();
  if (d.empty) return nullptr;
  const std::size_t in_size = dtype_info(op.input_dtype()).size;
  const std::size_t out_size = dtype_info(op.output_dtype()).size;
  Choice c = choose(d, in_size, out_size, isa_, per_operation_choice_);
  const std::uint64_t total = d.output.element_count();
  // Runs on several threads (their lease is taken per run) and the reference's stay run()'s.
  if (!c.kernel || total == 0 || thread_count(total * std::max(in_size, out_size)).threads > 1) return nullptr;
  return std::make_unique<CpuPreparedRun>(std::move(c), d, total);
}

void CpuBackend::run(const ValidatedOp& op, const ExecuteBuffers& buffers) {
  const DmlOperatorDesc& d = op.desc();
  if (d.empty) return;
  const std::size_t in_size = dtype_info(op.input_dtype()).size;
  const std::size_t out_size = dtype_info(op.output_dtype()).size;
  if (buffers.inputs.size() != d.inputs.size())
    throw Error(Errc::internal,
                fmt::format("cpu backend: {} input buffers for {} inputs", buffers.inputs.size(), d.inputs.size()));
  for (std::size_t i = 0; i < d.inputs.size(); ++i)
    if (buffers.inputs[i].size() < extent_bytes(d.inputs[i], in_size))
      throw Error(Errc::internal, fmt::format("cpu backend: input {} has {} bytes, its descriptor reads {}", i,
                                              buffers.inputs[i].size(), extent_bytes(d.inputs[i], in_size)));
  const std::uint64_t total = d.output.element_count();
  if (buffers.output.size() < total * out_size)
    throw Error(Errc::internal, fmt::format("cpu backend: the output has {} bytes, the result needs {}",
                                            buffers.output.size(), total * out_size));

  const Choice choice = choose(d, in_size, out_size, isa_, per_operation_choice_);
  if (!choice.kernel) {
    CpuReferenceBackend().run(op, buffers);
    return;
  }
  std::array<const std::byte*, 2> inputs{};
  for (std::size_t i = 0; i < d.inputs.size(); ++i) inputs[i] = buffers.inputs[i].data();
  const Job job = job_of(choice, d, inputs.data(), buffers.output.data());

  const std::uint64_t work_bytes = total * std::max(in_size, out_size);
  const unsigned wanted = thread_count(work_bytes).threads;
  if (wanted <= 1) {
    run_range(job, 0, total);
    return;
  }
  // On the default count, what the process's other runs leave (calls from several threads).
  std::optional<ThreadLease> lease;
  if (default_threads_) lease.emplace(wanted);
  const unsigned parts = lease ? lease->threads() : wanted;
  if (parts <= 1) {
    run_range(job, 0, total);
    return;
  }
  run_in_parts(total, parts, [&job](unsigned, std::uint64_t begin, std::uint64_t end) { run_range(job, begin, end); });
}

}  // namespace dmlbits
