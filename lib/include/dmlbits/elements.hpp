// One operator's CPU kernel over a run of elements in memory the caller holds: for a face that
// drives its own iteration over arrays (the Python module's NumPy ufuncs, whose inner loops NumPy
// calls with pointers and steps) and so has no tensors, descriptors or backend of its own. The
// element-wise part of the "cpu" backend: the same kernels, kernel choice and thread rule.
#pragma once

#include <cstddef>

#include "dmlbits/dtype.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits {

// How each input of a run is laid out.
enum class ElementLayout : unsigned char {
  vectors,   // a and b are runs of n elements
  b_scalar,  // b is one element used at every position (a is a run)
  a_scalar,  // a is one element used at every position (b is a run)
};

// Computes out[i] = op(a[i], b[i]) for i < n, with the semantics of op's reference function
// (ops.hpp) at `overflow`: the kernel the "cpu" backend runs for (op, the dtypes' widths) on this
// CPU's widest instruction set with the per-operation choice, on the calling thread, or, when
// n * (the wider element size) reaches kParallelMinBytes (4 MiB), split over the threads the
// backend's thread rule gives that size on the machine's default count, leased from the
// process's budget shared with the library's other runs. An operator or width without a kernel
// runs its reference function element by element. Large outputs are written past the caches, as
// the backend writes them, except in place (out is a), where they stay cached.
//
// The caller's contract: `input` is a dtype op accepts at some feature level (nothing is
// validated: the widths select the kernel); `output` is `input` or, for an operator with output
// types of its own (popcount), one of them. Unary operators ignore b and `layout` (give
// vectors). a, b and out need no alignment and hold n elements (one for a scalar operand); out
// may be exactly a's memory (in place) if op.allows_in_place() and the layout is vectors or
// b_scalar, and must not otherwise overlap a or b. n may be 0. The threads write disjoint
// 64-element parts of out. Throws nothing but std::bad_alloc; a thread that cannot be started
// has its share run on the calling thread.
void run_elements(OpKind op, DType input, DType output, std::size_t n, const void* a, const void* b, void* out,
                  ElementLayout layout = ElementLayout::vectors, ShiftOverflow overflow = kDefaultShiftOverflow);

}  // namespace dmlbits
