// The operators as NumPy ufuncs: one legacy loop (PyUFunc_FromFuncAndData...) per dtype signature
// of the newest tier of each operator's row, so NumPy's machinery (broadcasting, casting, out=,
// where=, reduce, accumulate, reduceat, outer, at, __array_ufunc__) drives the library's kernels.
//
// NumPy calls a loop with n elements, a pointer and a byte step per operand. The loop runs
// - the kernel directly (the loop's ElementKernel, chosen when the ufuncs are made: threads for
//   long runs) when the output is contiguous and each input is contiguous or one repeated element;
// - the kernel over 1024-element chunks gathered into and scattered from buffers for other steps;
// - an element at a time, in order, where the output overlaps an input other than exactly (the
//   patterns accumulate and reduce make: each element reads the one written before it), except
//   reduce's fold of and/or/xor into one element, which is a loop over 64-bit words.
#include "ufuncs.hpp"

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/ufuncobject.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "arrays.hpp"
#include "dmlbits/elements.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits::python {
namespace {

namespace py = pybind11;

struct Loop {
  OpKind op;
  DType in, out;
  std::size_t in_size, out_size;
  unsigned bits;
  ReferenceFn reference;
  bool in_place;     // the kernel may write over input a
  bool commutative;  // and, or, xor: a and b may swap
  bool folds;        // and, or, xor: reduce folds words
  // The kernels of the three layouts, in ElementLayout's order, chosen when the ufuncs are made
  // (a loop call of 16 elements would otherwise spend more choosing its kernel than running it).
  std::array<ElementKernel, 3> kernels;

  const ElementKernel& kernel(ElementLayout layout) const { return kernels[static_cast<std::size_t>(layout)]; }
};

// One element by the reference function, from and to memory of the loop's sizes.
inline void element(const Loop& l, const char* a, const char* b, char* out) {
  std::uint64_t x = 0, y = 0;
  std::memcpy(&x, a, l.in_size);
  if (b != nullptr) std::memcpy(&y, b, l.in_size);
  const std::uint64_t v = l.reference(x, y, l.bits, kDefaultShiftOverflow);
  std::memcpy(out, &v, l.out_size);
}

// In order, as NumPy's own loops run: right for any overlap.
void sequential(const Loop& l, npy_intp n, const char* a, npy_intp sa, const char* b, npy_intp sb, char* out,
                npy_intp so) {
  for (npy_intp i = 0; i < n; ++i) element(l, a + i * sa, b == nullptr ? nullptr : b + i * sb, out + i * so);
}

std::uint64_t fold_op(OpKind op, std::uint64_t x, std::uint64_t y) {
  return op == OpKind::bit_and ? x & y : op == OpKind::bit_or ? x | y : x ^ y;
}

// *acc = acc op b[0] op ... op b[n-1] for and, or, xor. Bitwise operators act on each bit alone, so
// contiguous elements fold as 64-bit words whose lanes are folded at the end.
void fold(const Loop& l, char* acc, const char* b, npy_intp sb, npy_intp n) {
  std::uint64_t v = 0;
  std::memcpy(&v, acc, l.in_size);
  npy_intp i = 0;
  if (sb == static_cast<npy_intp>(l.in_size)) {
    const std::size_t bytes = static_cast<std::size_t>(n) * l.in_size, words = bytes / 8;
    std::array<std::uint64_t, 4> w{};
    w.fill(l.op == OpKind::bit_and ? ~std::uint64_t{0} : 0);
    std::size_t k = 0;
    for (; k + 4 <= words; k += 4)
      for (std::size_t j = 0; j < 4; ++j) {
        std::uint64_t x;
        std::memcpy(&x, b + (k + j) * 8, 8);
        w[j] = fold_op(l.op, w[j], x);
      }
    for (; k < words; ++k) {
      std::uint64_t x;
      std::memcpy(&x, b + k * 8, 8);
      w[0] = fold_op(l.op, w[0], x);
    }
    std::uint64_t word = fold_op(l.op, fold_op(l.op, w[0], w[1]), fold_op(l.op, w[2], w[3]));
    for (std::size_t lane = 0; lane < 8; lane += l.in_size) v = fold_op(l.op, v, word >> (lane * 8));
    i = static_cast<npy_intp>(words * 8 / l.in_size);
  }
  for (; i < n; ++i) {
    std::uint64_t x = 0;
    std::memcpy(&x, b + i * sb, l.in_size);
    v = fold_op(l.op, v, x);
  }
  std::memcpy(acc, &v, l.in_size);  // the low bytes: the element (little-endian)
}

struct Range {
  const char* low;
  const char* high;  // one past the last byte
};
Range range_of(const char* p, npy_intp step, npy_intp n, std::size_t size) {
  const char* last = p + (n - 1) * step;
  return {std::min(p, last), std::max(p, last) + size};
}
bool overlap(Range x, Range y) { return x.low < y.high && y.low < x.high; }

constexpr npy_intp kChunk = 1024;

// Copies n elements of `size` bytes from a strided run to a packed one, or back.
void gather(char* to, const char* from, npy_intp step, npy_intp n, std::size_t size) {
  for (npy_intp i = 0; i < n; ++i) std::memcpy(to + static_cast<std::size_t>(i) * size, from + i * step, size);
}
void scatter(char* to, npy_intp step, const char* from, npy_intp n, std::size_t size) {
  for (npy_intp i = 0; i < n; ++i) std::memcpy(to + i * step, from + static_cast<std::size_t>(i) * size, size);
}

void run(const Loop& l, npy_intp n, const char* a, npy_intp sa, const char* b, npy_intp sb, char* out, npy_intp so) {
  if (n <= 0) return;
  const auto in = static_cast<npy_intp>(l.in_size), os = static_cast<npy_intp>(l.out_size);
  const bool binary = b != nullptr;
  if (n == 1) {
    element(l, a, b, out);
    return;
  }
  // Reduce into one element (NumPy passes the accumulator as a and out, both with step 0).
  if (so == 0) {
    if (l.folds && a == out && sa == 0) fold(l, out, b, sb, n);
    else sequential(l, n, a, sa, b, sb, out, so);
    return;
  }
  const Range o = range_of(out, so, n, l.out_size);
  bool alias_a = false, alias_b = false;
  if (overlap(o, range_of(a, sa, n, l.in_size))) {
    if (a != out || sa != so) return sequential(l, n, a, sa, b, sb, out, so);
    alias_a = true;
  }
  if (binary && overlap(o, range_of(b, sb, n, l.in_size))) {
    if (b != out || sb != so) return sequential(l, n, a, sa, b, sb, out, so);
    alias_b = true;
  }
  if (alias_b && !alias_a && l.commutative) {
    std::swap(a, b);
    std::swap(sa, sb);
    std::swap(alias_a, alias_b);
  }
  // Scalars: a step of 0 over n > 1 elements (one operand only: two repeated are gathered).
  const bool b_scalar = binary && sb == 0 && sa != 0;
  const bool a_scalar = binary && sa == 0 && !b_scalar;
  const bool a_run = sa == in || a_scalar, b_run = !binary || sb == in || b_scalar;
  const ElementLayout layout = a_scalar   ? ElementLayout::a_scalar
                               : b_scalar ? ElementLayout::b_scalar
                                          : ElementLayout::vectors;
  const bool alias_ok = !alias_b && (!alias_a || (l.in_place && !a_scalar));
  if (so == os && a_run && b_run && alias_ok) {
    l.kernel(layout).run(static_cast<std::size_t>(n), a, b, out);
    return;
  }
  // Chunks: each input read (in place or gathered) before its chunk of out is written.
  alignas(64) std::array<char, kChunk * 8> buf_a, buf_b, buf_out;
  const bool out_direct = so == os && !alias_a && !alias_b;
  const ElementKernel& kernel = l.kernel(layout);
  for (npy_intp start = 0; start < n; start += kChunk) {
    const npy_intp m = std::min(kChunk, n - start);
    const char* pa = a + (a_scalar ? 0 : start * sa);
    const char* pb = binary ? b + (b_scalar ? 0 : start * sb) : nullptr;
    if (!a_scalar && sa != in) {
      gather(buf_a.data(), pa, sa, m, l.in_size);
      pa = buf_a.data();
    }
    if (binary && !b_scalar && sb != in) {
      gather(buf_b.data(), pb, sb, m, l.in_size);
      pb = buf_b.data();
    }
    char* po = out_direct ? out + start * so : buf_out.data();
    kernel.run(static_cast<std::size_t>(m), pa, pb, po);
    if (!out_direct) scatter(out + start * so, so, buf_out.data(), m, l.out_size);
  }
}

// NumPy's loop signatures. Nothing here throws (ElementKernel::run throws only std::bad_alloc, for
// the few words its threads need, which is then an out-of-memory abort as in NumPy's own loops).
void binary_loop(char** args, const npy_intp* dims, const npy_intp* steps, void* data) {
  run(*static_cast<const Loop*>(data), dims[0], args[0], steps[0], args[1], steps[1], args[2], steps[2]);
}
void unary_loop(char** args, const npy_intp* dims, const npy_intp* steps, void* data) {
  run(*static_cast<const Loop*>(data), dims[0], args[0], steps[0], nullptr, 0, args[1], steps[1]);
}

// NumPy's resolution, less one thing: a float loop only for operands of that very float dtype.
// Floats are bit patterns here, and NumPy's promotion would reach a float loop by converting
// values (uint64 with int64 gives float64, float32 with float64 converts the float32s), whose
// bits no operand had; NumPy's own bitwise ufuncs have no float loops and refuse such operands.
int resolve_types(PyUFuncObject* ufunc, NPY_CASTING casting, PyArrayObject** operands, PyObject* type_tup,
                  PyArray_Descr** out_dtypes) {
  if (PyUFunc_DefaultTypeResolver(ufunc, casting, operands, type_tup, out_dtypes) < 0) return -1;
  const int loop_type = out_dtypes[0]->type_num;
  if (!PyTypeNum_ISFLOAT(loop_type)) return 0;
  for (int i = 0; i < ufunc->nin; ++i) {
    if (operands[i] == nullptr || PyArray_DESCR(operands[i])->type_num == loop_type) continue;
    const std::string message = fmt::format(
        "ufunc '{}': the {} loop takes {} operands only, not {} (floats are bit patterns: convert "
        "values with astype, or reinterpret bits with view)",
        ufunc->name, dtype_info(*dtype_of_type_number(loop_type)).numpy_name,
        dtype_info(*dtype_of_type_number(loop_type)).numpy_name,
        py::str(reinterpret_cast<PyObject*>(PyArray_DESCR(operands[i]))).cast<std::string>());
    for (int j = 0; j < ufunc->nargs; ++j) Py_CLEAR(out_dtypes[j]);
    PyErr_SetString(PyExc_TypeError, message.c_str());
    return -1;
  }
  return 0;
}

// What NumPy keeps pointers to for the life of the process: each ufunc's loops and their data.
struct Tables {
  std::string name, doc;
  std::vector<PyUFuncGenericFunction> functions;
  std::vector<void*> data;
  std::vector<char> types;
};

std::string doc_of(const OpInfo& info) {
  std::string summary(info.summary);
  for (const auto& [letter, name] : {std::pair{"A", info.arity == 1 ? "x" : "x1"}, std::pair{"B", "x2"}}) {
    for (std::size_t p = summary.find(letter); p != std::string::npos; p = summary.find(letter, p + 1)) {
      const bool word_start = p == 0 || summary[p - 1] == ' ',
                 word_end = p + 1 == summary.size() || summary[p + 1] == ' ';
      if (word_start && word_end) summary.replace(p, 1, name);
    }
  }
  std::string doc = fmt::format(
      "The {}, as DirectML's {} computes it at the newest feature level (the CLI's `dmlbits {}`): a NumPy ufunc.\n\n"
      "{}\n\n",
      summary, info.dml_operator_name().substr(std::string("DML_OPERATOR_").size()), info.verb, info.python_notes);
  if (info.shift)
    doc += fmt::format(
        "Counts at or past the width follow DirectML's rule (shift_overflow=\"directml\"); a ufunc takes no "
        "shift_overflow=: use dmlbits.{} for \"zero\" or \"wrap\".\n\n",
        info.python_name);
  if (!info.output_dtype_is_input_dtype())
    doc += "The result is uint8; dtype=\"uint32\" (or signature) selects the uint32 loop.\n\n";
  doc +=
      "NumPy's machinery applies (unlike dmlbits' function of this name): type resolution and casting (Python "
      "ints take the array's dtype where they fit, mixed integer dtypes are promoted; float loops take operands "
      "of their own dtype only), broadcasting, out=, where=, casting=, dtype=, order=, the methods (reduce, "
      "accumulate, reduceat, outer, at) and __array_ufunc__ dispatch (Dask, xarray). bool is computed as uint8 "
      "and gives uint8. It runs the CPU kernels, chosen once, when the ufuncs are made (at import): this CPU's "
      "widest instruction set with the per-operation choice (DMLBITS_ISA and DMLBITS_THREADS do not apply); "
      "backend=, feature_level=, timing= and the other keywords of dmlbits' functions are theirs alone.";
  return doc;
}

py::list make_ufuncs(py::object all_ones) {
  static std::deque<Loop> loops;     // stable addresses: the loops' data
  static std::deque<Tables> tables;  // one per operator
  // Never destroyed: the interpreter may be gone by the time static destructors run.
  static auto* made = new py::list();
  if (!made->empty()) return *made;
  if (_import_array() < 0 || _import_umath() < 0) throw py::error_already_set();
  for (const OpInfo& info : op_table()) {
    const OpTier& tier = info.tiers.back();  // the newest: every later level accepts the same
    Tables& t = tables.emplace_back();
    t.name = std::string(info.python_name);
    t.doc = doc_of(info);
    const bool folds = info.kind == OpKind::bit_and || info.kind == OpKind::bit_or || info.kind == OpKind::bit_xor;
    for (const DTypeInfo& in : dtype_table()) {
      if (!tier.inputs.contains(in.dtype)) continue;
      std::vector<DType> outs;
      if (tier.outputs.empty()) outs.push_back(in.dtype);
      else
        for (const DTypeInfo& o : dtype_table())
          if (tier.outputs.contains(o.dtype)) outs.push_back(o.dtype);
      // The default output first: NumPy takes the first loop whose inputs fit.
      std::stable_partition(outs.begin(), outs.end(),
                            [&](DType d) { return d == info.default_output_dtype(in.dtype); });
      for (DType out : outs) {
        const auto kernel = [&](ElementLayout layout) { return ElementKernel(info.kind, in.dtype, out, layout); };
        loops.push_back(
            Loop{info.kind,
                 in.dtype,
                 out,
                 in.size,
                 dtype_info(out).size,
                 in.bits(),
                 info.reference,
                 info.allows_in_place(),
                 folds,
                 folds,
                 {kernel(ElementLayout::vectors), kernel(ElementLayout::b_scalar), kernel(ElementLayout::a_scalar)}});
        t.functions.push_back(info.arity == 1 ? &unary_loop : &binary_loop);
        t.data.push_back(&loops.back());
        for (int k = 0; k < info.arity; ++k) t.types.push_back(static_cast<char>(numpy_dtype(in.dtype).num()));
        t.types.push_back(static_cast<char>(numpy_dtype(out).num()));
      }
    }
    // and: all ones; or, xor: 0 (NumPy's bitwise_and, bitwise_or, bitwise_xor); the shifts and
    // the unary operators none (shifts are not reorderable: a reduce over several axes is refused).
    int identity = PyUFunc_None;
    PyObject* identity_value = nullptr;
    if (info.kind == OpKind::bit_and) {
      identity = PyUFunc_IdentityValue;
      identity_value = all_ones.ptr();
    } else if (info.kind == OpKind::bit_or || info.kind == OpKind::bit_xor) {
      identity = PyUFunc_Zero;
    }
    PyObject* f = PyUFunc_FromFuncAndDataAndSignatureAndIdentity(
        t.functions.data(), t.data.data(), t.types.data(), static_cast<int>(t.functions.size()), info.arity, 1,
        identity, t.name.c_str(), t.doc.c_str(), 0, nullptr, identity_value);
    if (f == nullptr) throw py::error_already_set();
    reinterpret_cast<PyUFuncObject*>(f)->type_resolver = &resolve_types;
    made->append(py::make_tuple(t.name, std::string(info.python_alias), py::reinterpret_steal<py::object>(f)));
  }
  return *made;
}

}  // namespace

void add_ufuncs(py::module_& m) { m.def("ufuncs", &make_ufuncs); }

}  // namespace dmlbits::python
