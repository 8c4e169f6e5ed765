// The operators as NumPy ufuncs (dmlbits.ufunc): made from the operator table, their inner loops
// the CPU kernels (dmlbits/elements.hpp).
#pragma once

#include <pybind11/pybind11.h>

namespace dmlbits::python {

// Adds `ufuncs(all_ones)` to the extension: a list of (name, alias, ufunc), one per operator in
// table order, made once (a later call returns the same objects). `all_ones` is bitwise_and's
// identity: -1 as an int, a NaN of all-ones bits as a float (dmlbits/ufunc.py says why).
void add_ufuncs(pybind11::module_& m);

}  // namespace dmlbits::python
