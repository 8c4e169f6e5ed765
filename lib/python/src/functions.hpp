// The operators' functions (dmlbits.bitwise_and, ...) as built-in functions: Python's call
// parsed in C into the extension's run() arguments, with no Python frame on the way (a `def`
// wrapper cost a third of a 4x4 call: issue 47 item 4).
#pragma once

#include <pybind11/pybind11.h>

namespace dmlbits::python {

// The positions of run()'s arguments: (op index, x1, x2, out, dtype, backend, feature_level,
// shift_overflow, out_dtype, threads, isa, adapter, timing, repeat, warmup).
enum RunArgument : int {
  kRunOp,
  kRunX1,
  kRunX2,
  kRunOut,
  kRunDtype,
  kRunBackend,
  kRunFeatureLevel,
  kRunShiftOverflow,
  kRunOutDtype,
  kRunThreads,
  kRunIsa,
  kRunAdapter,
  kRunTiming,
  kRunRepeat,
  kRunWarmup,
  kRunArguments
};

// run() itself: the kRunArguments values, borrowed; a new reference, or null with Python's error set.
using RunFunction = PyObject* (*)(PyObject* const* values);

// Adds `operator_function(op_index, name, module, arity, shift_overflow, out_dtype, doc)` to the
// extension: the built-in function `name` of `module` (so that it pickles by reference) whose
// signature is
//   name(x1, x2, /, out=None, *, dtype=None[, shift_overflow=None][, out_dtype=None],
//        backend="auto", feature_level=None, threads=None, isa=None, adapter=None, timing=False,
//        repeat=1, warmup=0)
// (x alone for arity 1; the two bracketed keywords where the flags say), shown by inspect and
// help() from its text signature, refusing other calls with Python's own TypeErrors, and calling
// `run` with the operator's index and the values given or the defaults. A call with the same
// arguments again returns the same function; at most 64 different ones can be made.
void add_operator_functions(pybind11::module_& m, RunFunction run);

}  // namespace dmlbits::python
