// NumPy arrays in and out of the library: an operand array seen as a BorrowedTensor (read in
// place when C-contiguous and native-endian; other layouts and big-endian data are given with
// their strides and byte order, and the library converts them as it reads them), and tensors
// handed to Python as arrays that own them. Every function here needs the GIL.
#pragma once

#include <optional>
#include <utility>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include "dmlbits/tensor.hpp"

namespace dmlbits::python {

namespace py = pybind11;

// An array operand: `tensor` points into `array`, which keeps the memory alive.
struct ArrayOperand {
  py::array array;
  BorrowedTensor tensor;
};

// The DType of a NumPy dtype: bool is read as uint8, as the CLI reads a '|b1' .npy; anything
// else without a DirectML type (complex, object, strings, float128) is Errc::invalid_input
// "unsupported dtype '<c8'", as in an .npy file.
DType dtype_of(const py::dtype& dt);
py::dtype numpy_dtype(DType d);
// The DType of NumPy's type number (PyArray_Descr::type_num) of a dtype that has one (bool:
// uint8), else nullopt.
std::optional<DType> dtype_of_type_number(int type_num);
// Whether the dtype's data is in this machine's byte order (always, for one-byte types).
bool is_native(const py::dtype& dt);

// An ndarray (or NumPy scalar, or anything np.asarray takes) as an operand. `writable`: set
// BorrowedTensor::writable when the array's own memory is used and may be written (in place).
ArrayOperand array_operand(const py::handle& obj, bool writable = false);

// An array in C order and native byte order (converted by NumPy if it is not), for the file
// and comparison services, which take a TensorView.
struct CArray {
  py::array array;
  TensorView view;
};
CArray c_array(const py::handle& obj);

// An uninitialised NumPy array, in C order or (`fortran`) Fortran order.
py::array new_array(DType dtype, const Shape& shape, bool fortran = false);

// Tensors the library made (read_tensor's) smaller than this are copied into an array of
// NumPy's own; larger ones are handed over without a copy (the array owns the tensor). An
// operator's result is NumPy's from the start (RunHooks::allocate_result).
inline constexpr std::size_t kCopiedResultBytes = std::size_t{16} << 10;
// A tensor as a NumPy array: handed over without a copy, or copied when small.
py::array tensor_array(Tensor t);

// The bytes a borrowed tensor's elements lie in, from its lowest to past its highest (strides
// may be negative).
std::pair<const std::byte*, const std::byte*> byte_extent(const BorrowedTensor& t);

// Whether two byte ranges overlap.
bool overlaps(const std::byte* a, std::size_t a_size, const std::byte* b, std::size_t b_size);

}  // namespace dmlbits::python
