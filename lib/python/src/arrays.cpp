#include "arrays.hpp"

#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits::python {
namespace {

std::vector<py::ssize_t> dims_of(const Shape& shape) {
  std::vector<py::ssize_t> dims;
  for (auto d : shape.dims()) dims.push_back(static_cast<py::ssize_t>(d));
  return dims;
}

}  // namespace

DType dtype_of(const py::dtype& dt) {
  const char kind = dt.kind();
  const auto size = static_cast<std::size_t>(dt.itemsize());
  if (kind == 'b' && size == 1) return DType::uint8;
  for (const auto& info : dtype_table())
    if (static_cast<char>(info.kind) == kind && info.size == size) return info.dtype;
  throw Error(Errc::invalid_input, fmt::format("unsupported dtype '{}'", py::str(dt.attr("str")).cast<std::string>()));
}

bool is_native(const py::dtype& dt) {
  static_assert(std::endian::native == std::endian::little, "dmlbits' tensors are little-endian");
  const char order = dt.byteorder();
  return order != '>';  // '=' native, '|' not applicable, '<' little
}

py::dtype numpy_dtype(DType d) {
  // Made once: py::dtype from a name goes through NumPy's parser each time.
  static const auto table = [] {
    auto* t = new std::array<py::object, kDTypeCount>;  // never freed: it outlives the interpreter's use
    for (const auto& info : dtype_table())
      (*t)[static_cast<std::size_t>(info.dtype)] = py::dtype(std::string(info.numpy_name));
    return t;
  }();
  return py::reinterpret_borrow<py::dtype>((*table)[static_cast<std::size_t>(d)]);
}

std::optional<DType> dtype_of_type_number(int type_num) {
  // NumPy's type numbers of the table's dtypes, found once (bool: NPY_BOOL, read as uint8).
  static const auto table = [] {
    std::vector<std::pair<int, DType>> t{{py::dtype("bool").num(), DType::uint8}};
    for (const auto& info : dtype_table()) t.emplace_back(numpy_dtype(info.dtype).num(), info.dtype);
    return t;
  }();
  for (const auto& [num, d] : table)
    if (num == type_num) return d;
  return std::nullopt;
}

ArrayOperand array_operand(const py::handle& obj, bool writable) {
  static const py::handle asarray = py::object(py::module_::import("numpy").attr("asarray")).release();
  py::array a = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj) : py::array(asarray(obj));
  py::dtype dt = a.dtype();
  const DType d = dtype_of(dt);  // bool: uint8, the same bytes
  const auto ndim = static_cast<std::size_t>(a.ndim());
  if (ndim > kMaxRank)
    throw Error(Errc::invalid_input, fmt::format("{} dimensions; a tensor has at most {}", ndim, kMaxRank));
  std::array<std::uint64_t, kMaxRank> dims{};
  for (std::size_t i = 0; i < ndim; ++i) dims[i] = static_cast<std::uint64_t>(a.shape(static_cast<py::ssize_t>(i)));
  ArrayOperand op{a, {}};
  BorrowedTensor& t = op.tensor;
  t.dtype = d;
  t.shape = Shape(std::span<const std::uint64_t>(dims.data(), ndim));
  t.data = static_cast<const std::byte*>(a.data());
  // Big-endian data: what the CLI does with a big-endian .npy, the same values native; the
  // library swaps them as it reads them.
  t.byte_swapped = !is_native(dt);
  const int flags = a.flags();
  if (!(flags & py::array::c_style)) {
    // Fortran order, a slice with steps, a transposed view: the library converts it to C order
    // as it reads it.
    t.strides.resize(ndim);
    for (std::size_t i = 0; i < ndim; ++i)
      t.strides[i] = static_cast<std::int64_t>(a.strides(static_cast<py::ssize_t>(i)));
  } else if (writable && a.writeable() && !t.byte_swapped) {
    t.writable = static_cast<std::byte*>(a.mutable_data());
  }
  return op;
}

std::pair<const std::byte*, const std::byte*> byte_extent(const BorrowedTensor& t) {
  const std::size_t size = dtype_info(t.dtype).size;
  if (t.strides.empty() || t.shape.element_count() == 0) return {t.data, t.data + t.shape.byte_size(size)};
  std::int64_t low = 0, high = static_cast<std::int64_t>(size);
  for (std::size_t d = 0; d < t.shape.rank(); ++d) {
    const std::int64_t span = t.strides[d] * static_cast<std::int64_t>(t.shape[d] - 1);
    (span < 0 ? low : high) += span;
  }
  return {t.data + low, t.data + high};
}

CArray c_array(const py::handle& obj) {
  ArrayOperand a = array_operand(obj);
  if (!a.tensor.read_in_place()) {
    static const py::handle asarray = py::object(py::module_::import("numpy").attr("asarray")).release();
    return c_array(asarray(a.array, numpy_dtype(a.tensor.dtype), "C"));
  }
  return {a.array, TensorView{a.tensor.dtype, a.tensor.shape, a.tensor.data}};
}

py::array new_array(DType dtype, const Shape& shape, bool fortran) {
  // Through NumPy's C API, as pybind11's py::array does, without its shape and stride vectors.
  auto& api = py::detail::npy_api::get();
  std::array<Py_intptr_t, kMaxRank> dims{};
  for (std::size_t i = 0; i < shape.rank(); ++i) dims[i] = static_cast<Py_intptr_t>(shape[i]);
  auto a = py::reinterpret_steal<py::array>(
      api.PyArray_NewFromDescr_(api.PyArray_Type_, numpy_dtype(dtype).release().ptr(), static_cast<int>(shape.rank()),
                                dims.data(), nullptr, nullptr, fortran ? 1 : 0, nullptr));
  if (!a) throw py::error_already_set();
  return a;
}

py::array tensor_array(Tensor t) {
  if (t.byte_size() < kCopiedResultBytes) {
    // A new array of NumPy's own, the bytes copied: cheaper than handing the tensor over.
    py::array a = new_array(t.dtype(), t.shape());
    if (t.byte_size() > 0) std::memcpy(py::detail::array_proxy(a.ptr())->data, t.data(), t.byte_size());
    return a;
  }
  auto owned = std::make_unique<Tensor>(std::move(t));
  Tensor* raw = owned.get();
  py::capsule owner(owned.release(), [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(raw->dtype()), dims_of(raw->shape()), raw->data(), owner);
}

bool overlaps(const std::byte* a, std::size_t a_size, const std::byte* b, std::size_t b_size) {
  return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
}

}  // namespace dmlbits::python
