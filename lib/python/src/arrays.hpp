// NumPy arrays in and out of the library: an operand array seen as a TensorView (without a copy
// when it is C-contiguous and native-endian, converted as the CLI converts a big-endian or
// Fortran-order .npy otherwise), and tensors handed to Python as arrays that own them.
// Every function here needs the GIL.
#pragma once

#include <optional>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "dmlbits/tensor.hpp"

namespace dmlbits::python {

namespace py = pybind11;

// An array operand: `view` points into `array`, which keeps the memory alive.
struct ArrayOperand {
  py::array array;
  TensorView view;
};

// The DType of a NumPy dtype: bool is read as uint8, as the CLI reads a '|b1' .npy; anything
// else without a DirectML type (complex, object, strings, float128) is Errc::invalid_input
// "unsupported dtype '<c8'", as in an .npy file.
DType dtype_of(const py::dtype& dt);
py::dtype numpy_dtype(DType d);
// Whether the dtype's data is in this machine's byte order (always, for one-byte types).
bool is_native(const py::dtype& dt);

// An ndarray (or NumPy scalar) as an operand: C-contiguous native-endian data is used in place;
// other layouts are copied to C order and native byte order first.
ArrayOperand array_operand(const py::handle& obj);

// An uninitialised array for a result: from NumPy's allocator when small, else the library's
// aligned allocation (huge pages, resident from the start), which the array owns.
py::array new_array(DType dtype, const Shape& shape);

// A tensor handed over to Python without a copy.
py::array tensor_array(Tensor t);

// Whether two byte ranges overlap.
bool overlaps(const std::byte* a, std::size_t a_size, const std::byte* b, std::size_t b_size);

}  // namespace dmlbits::python
