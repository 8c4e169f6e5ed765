// One operator's CPU kernel over a run of elements in memory the caller holds: for a face that
// drives its own iteration over arrays (the Python module's NumPy ufuncs, whose inner loops NumPy
// calls with pointers and steps) and so has no tensors, descriptors or backend of its own. The
// element-wise part of the "cpu" backend: the same kernels, kernel choice and thread rule.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "dmlbits/dtype.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits {

// How each input of a run is laid out.
enum class ElementLayout : unsigned char {
  vectors,   // a and b are runs of n elements
  b_scalar,  // b is one element used at every position (a is a run)
  a_scalar,  // a is one element used at every position (b is a run)
};

struct KernelInfo;  // a row of the CPU backend's kernel table (internal)

// One operator's kernel for (input dtype, output dtype, layout, overflow), chosen once and run
// many times, so that a caller running many short runs (a ufunc's inner loop, called by NumPy
// for each 8192-element chunk of a reduce) pays for the choice once, as XNNPACK's operator
// configs do. Made, it chooses what run_elements would choose at that moment: the kernel of
// best_isa() (this CPU's widest instruction set, or the one force_isa() names; no environment
// variable is read) with the per-operation table, or with an override that set's kernels only;
// an operator or width without a kernel runs its reference function element by element. A later
// force_isa() does not change a kernel already made.
//
// The contract for making one: `input` is a dtype op accepts at some feature level (nothing is
// validated: the widths select the kernel); `output` is `input` or, for an operator with output
// types of its own (popcount), one of them. Unary operators ignore `layout` (it is vectors).
// Throws nothing but std::bad_alloc. Copyable and small: a pointer and a few bytes.
class ElementKernel {
 public:
  ElementKernel(OpKind op, DType input, DType output, ElementLayout layout = ElementLayout::vectors,
                ShiftOverflow overflow = kDefaultShiftOverflow);

  // out[i] = op(a[i], b[i]) for i < n, with the semantics of op's reference function (ops.hpp)
  // at the overflow rule it was made with: on the calling thread when n * (the wider element
  // size) is under kParallelMinBytes (4 MiB), with nothing else done than call the kernel;
  // from there split over the threads the backend's thread rule gives that size on the
  // machine's default count, leased from the process's budget shared with the library's other
  // runs. Large outputs are written past the caches, as the backend writes them, except in
  // place (out is a), where they stay cached.
  //
  // a, b and out need no alignment and hold n elements (one for the layout's scalar operand); b
  // is ignored by unary operators (may be null). out may be exactly a's memory (in place) if
  // op.allows_in_place() and the layout is vectors or b_scalar, and must not otherwise overlap
  // a or b. n may be 0. The threads write disjoint 64-element parts of out. Throws nothing but
  // std::bad_alloc; a thread that cannot be started has its share run on the calling thread.
  void run(std::size_t n, const void* a, const void* b, void* out) const;

  // The kernel's name ("x32_or__avx512", "x32_shl_c__avx2"), or "reference" where the operator's
  // reference function runs: for tests and benchmarks.
  std::string kernel_name() const;

 private:
  const KernelInfo* kernel_;  // nullptr: the reference function
  ReferenceFn reference_;
  ShiftOverflow overflow_;
  ElementLayout layout_;
  bool binary_;
  unsigned char in_size_, out_size_;
  std::uint8_t isa_;  // the instruction set chosen (Isa), for the thread rule's knee
};

// ElementKernel(op, input, output, layout, overflow).run(n, a, b, out): for one run. Choosing the
// kernel costs tens of nanoseconds, as much as a short run's kernel: keep an ElementKernel where
// runs repeat.
void run_elements(OpKind op, DType input, DType output, std::size_t n, const void* a, const void* b, void* out,
                  ElementLayout layout = ElementLayout::vectors, ShiftOverflow overflow = kDefaultShiftOverflow);

}  // namespace dmlbits
