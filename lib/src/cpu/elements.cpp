// ElementKernel and run_elements (dmlbits/elements.hpp): CpuBackend::run's kernel choice, made
// once, and its thread split for runs the caller lays out itself.
#include "dmlbits/elements.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>

#include "cpu_backend.hpp"
#include "thread_rule.hpp"

namespace dmlbits {
namespace {

struct Run {
  KernelFn fn = nullptr;
  ReferenceFn reference = nullptr;
  unsigned bits = 0;
  KernelParams params;
  const std::byte* a;
  const std::byte* b;
  std::byte* out;
  std::size_t in_size, out_size;
  ElementLayout layout;
};

// Elements [begin, end) of the run.
void run_part(const Run& r, std::size_t begin, std::size_t end) {
  if (begin >= end) return;
  const std::byte* a = r.layout == ElementLayout::a_scalar ? r.a : r.a + begin * r.in_size;
  const std::byte* b = r.b == nullptr || r.layout == ElementLayout::b_scalar ? r.b : r.b + begin * r.in_size;
  std::byte* out = r.out + begin * r.out_size;
  if (r.fn != nullptr) {
    r.fn(end - begin, a, b, out, r.params);
    return;
  }
  // The reference, on the raw bits zero-extended (little-endian hosts: the low bytes first).
  const std::size_t a_step = r.layout == ElementLayout::a_scalar ? 0 : r.in_size;
  const std::size_t b_step = r.layout == ElementLayout::b_scalar ? 0 : r.in_size;
  for (std::size_t i = 0; i < end - begin; ++i) {
    std::uint64_t x = 0, y = 0;
    std::memcpy(&x, a + i * a_step, r.in_size);
    if (b != nullptr) std::memcpy(&y, b + i * b_step, r.in_size);
    const std::uint64_t v = r.reference(x, y, r.bits, r.params.shift_overflow);
    std::memcpy(out + i * r.out_size, &v, r.out_size);
  }
}

// In place, out's lines are in the cache already, read as a's: streaming stores (which save
// reading a line that is only written) would evict what the caller reads next (a reduce's
// accumulator, read back on every row).
KernelParams params_for(ShiftOverflow overflow, const void* a, const void* out) {
  KernelParams params;
  params.shift_overflow = overflow;
  if (out == a) params.stream_min_bytes = SIZE_MAX;
  return params;
}

// A run of kParallelMinBytes or more: on the threads the rule gives its size, or on this one.
void run_split(const Run& r, std::size_t n, Isa isa) {
  const std::uint64_t work_bytes = std::uint64_t{n} * std::max(r.in_size, r.out_size);
  CpuMachine machine = this_machine();
  machine.isa = isa;
  const unsigned wanted = cpu_thread_rule(machine, work_bytes).threads;
  if (wanted <= 1) {
    run_part(r, 0, n);
    return;
  }
  const ThreadLease lease(wanted);
  const unsigned parts = lease.threads();
  if (parts <= 1) {
    run_part(r, 0, n);
    return;
  }
  run_in_parts(n, parts, [&r](unsigned, std::uint64_t begin, std::uint64_t end) { run_part(r, begin, end); });
}

}  // namespace

ElementKernel::ElementKernel(OpKind op, DType input, DType output, ElementLayout layout, ShiftOverflow overflow)
    : kernel_(nullptr),
      reference_(op_info(op).reference),
      overflow_(overflow),
      layout_(op_info(op).arity == 1 ? ElementLayout::vectors : layout),
      binary_(op_info(op).arity == 2),
      in_size_(static_cast<unsigned char>(dtype_info(input).size)),
      out_size_(static_cast<unsigned char>(dtype_info(output).size)),
      isa_(0) {
  const Operands operands = layout_ == ElementLayout::a_scalar   ? Operands::a_scalar
                            : layout_ == ElementLayout::b_scalar ? Operands::b_scalar
                                                                 : Operands::vectors;
  // As CpuBackend without a set named: the host's widest set (or force_isa()'s) and, without
  // an override, the per-operation table.
  const Isa isa = best_isa();
  isa_ = static_cast<std::uint8_t>(isa);
  kernel_ = isa_override() ? select_kernel(op, in_size_, out_size_, isa, operands)
                           : dispatch_kernel(op, in_size_, out_size_, isa, operands);
}

void ElementKernel::run(std::size_t n, const void* a, const void* b, void* out) const {
  if (n == 0) return;
  if (std::uint64_t{n} * std::max(in_size_, out_size_) < kParallelMinBytes && kernel_ != nullptr) {
    // The short run's whole cost: one call (the thread rule's floor is one thread on any machine).
    kernel_->fn(n, a, binary_ ? b : nullptr, out, params_for(overflow_, a, out));
    return;
  }
  Run r{};
  r.fn = kernel_ == nullptr ? nullptr : kernel_->fn;
  r.reference = reference_;
  r.bits = in_size_ * 8u;
  r.params = params_for(overflow_, a, out);
  r.a = static_cast<const std::byte*>(a);
  r.b = binary_ ? static_cast<const std::byte*>(b) : nullptr;
  r.out = static_cast<std::byte*>(out);
  r.in_size = in_size_;
  r.out_size = out_size_;
  r.layout = layout_;
  if (std::uint64_t{n} * std::max(r.in_size, r.out_size) < kParallelMinBytes) run_part(r, 0, n);
  else run_split(r, n, static_cast<Isa>(isa_));
}

std::string ElementKernel::kernel_name() const {
  return kernel_ == nullptr ? std::string("reference") : dmlbits::kernel_name(*kernel_);
}

void run_elements(OpKind op, DType input, DType output, std::size_t n, const void* a, const void* b, void* out,
                  ElementLayout layout, ShiftOverflow overflow) {
  if (n == 0) return;
  ElementKernel(op, input, output, layout, overflow).run(n, a, b, out);
}

}  // namespace dmlbits
