#include "arrays.hpp"

#include <array>
#include <bit>
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
    for (const auto& info : dtype_table()) (*t)[static_cast<std::size_t>(info.dtype)] = py::dtype(std::string(info.numpy_name));
    return t;
  }();
  return py::reinterpret_borrow<py::dtype>((*table)[static_cast<std::size_t>(d)]);
}

ArrayOperand array_operand(const py::handle& obj) {
  py::array a = py::isinstance<py::array>(obj) ? py::reinterpret_borrow<py::array>(obj)
                                                : py::array(py::module_::import("numpy").attr("asarray")(obj));
  py::dtype dt = a.dtype();
  const DType d = dtype_of(dt);
  if (dt.kind() == 'b') a = a.attr("view")(numpy_dtype(DType::uint8));
  const int flags = a.flags();
  if (!(flags & py::array::c_style) || !is_native(dt)) {
    // What the CLI does with a big-endian or Fortran-order .npy: the same values, native and C order.
    // (np.asarray with order "C", not np.ascontiguousarray, which makes a 0-d array 1-d.)
    a = py::module_::import("numpy").attr("asarray")(a, numpy_dtype(d), "C");
  }
  if (a.ndim() > static_cast<py::ssize_t>(kMaxRank))
    throw Error(Errc::invalid_input, fmt::format("{} dimensions; a tensor has at most {}", a.ndim(), kMaxRank));
  std::array<std::uint64_t, kMaxRank> dims{};
  for (py::ssize_t i = 0; i < a.ndim(); ++i) dims[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(a.shape(i));
  ArrayOperand op{a, TensorView{d, Shape(std::span<const std::uint64_t>(dims.data(), static_cast<std::size_t>(a.ndim()))),
                                static_cast<const std::byte*>(a.data())}};
  return op;
}

py::array new_array(DType dtype, const Shape& shape) {
  const std::uint64_t bytes = shape.byte_size(dtype_info(dtype).size);
  if (bytes < (std::uint64_t{1} << 20)) return py::array(numpy_dtype(dtype), dims_of(shape));
  return tensor_array(Tensor(dtype, shape));
}

py::array tensor_array(Tensor t) {
  if (t.byte_size() == 0) return py::array(numpy_dtype(t.dtype()), dims_of(t.shape()));
  auto owned = std::make_unique<Tensor>(std::move(t));
  Tensor* raw = owned.get();
  py::capsule owner(owned.release(), [](void* p) { delete static_cast<Tensor*>(p); });
  return py::array(numpy_dtype(raw->dtype()), dims_of(raw->shape()), raw->data(), owner);
}

bool overlaps(const std::byte* a, std::size_t a_size, const std::byte* b, std::size_t b_size) {
  return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
}

}  // namespace dmlbits::python
