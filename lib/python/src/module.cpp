// _dmlbits: the extension under the `dmlbits` package (lib/python/dmlbits). Python code calls
// it only through the package's functions (the operators' are built-in functions made here
// from the table, functions.hpp), which give the names, keywords and docstrings; this file
// turns Python objects into the library's types and back, releases the GIL while an operation
// runs, and looks for Ctrl-C between its chunks.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <array>
#include <bit>
#include <atomic>
#include <functional>
#include <unordered_map>
#include <variant>
#include <charconv>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "arrays.hpp"
#include "dmlbits/check.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/plan.hpp"
#include "dmlbits/devices.hpp"
#include "dmlbits/request.hpp"
#include "files.hpp"
#include "functions.hpp"
#include "ufuncs.hpp"

namespace dmlbits::python {
namespace {

py::object from_json_text(const std::string& text) {
  // Never released: a static py::object would be destroyed after the interpreter.
  static py::handle loads = py::object(py::module_::import("json").attr("loads")).release();
  return loads(text);
}

py::object from_json(const nlohmann::json& j) { return from_json_text(j.dump()); }

// The Python face's words for an option's refusal (error.hpp): the keyword (threads),
// as a thing given with its `=` (adapter=); in place is asked for as out=x.
std::string keyword_name(OptionKey key) {
  return key == OptionKey::in_place ? std::string("out=x (in place)") : std::string(option_keyword(key));
}
std::string keyword_argument(OptionKey key) {
  return key == OptionKey::in_place ? keyword_name(key) : fmt::format("{}=", option_keyword(key));
}
std::string option_text(const OptionError& e) {
  // No Python function that reads a golden takes dtype=: the rule without the keyword.
  if (e.rule() == OptionRule::not_for_golden) {
    const std::string text = option_error_text(e, {&keyword_name, &keyword_argument, '\''});
    return text.substr(0, text.rfind(" ("));
  }
  return option_error_text(e, {&keyword_name, &keyword_argument, '\''});
}

// dtype= or out_dtype= (`key`) as given: None, a name ("uint8", "u1"), or anything
// numpy.dtype() takes (numpy.uint8, a dtype), by its NumPy name; parsed by the library's parser.
std::optional<DType> dtype_keyword(py::handle dtype, OptionKey key = OptionKey::dtype) {
  if (dtype.is_none()) return std::nullopt;
  if (py::isinstance<py::str>(dtype)) {
    const std::string name = dtype.cast<std::string>();
    if (name.empty()) return std::nullopt;
    return parse_dtype_option(name, key);
  }
  return parse_dtype_option(
      py::str(py::dtype::from_args(py::reinterpret_borrow<py::object>(dtype)).attr("name")).cast<std::string>(), key);
}

// threads= as given: None, or a Python int (not a bool) from 1 to kMaxThreads.
std::optional<unsigned> threads_keyword(py::handle threads) {
  if (threads.is_none()) return std::nullopt;
  if (PyBool_Check(threads.ptr()) || !PyLong_Check(threads.ptr()))
    throw OptionError(OptionKey::threads, OptionRule::not_a_count, py::str(threads).cast<std::string>(),
                      std::to_string(kMaxThreads));
  int overflow = 0;
  const long long n = PyLong_AsLongLongAndOverflow(threads.ptr(), &overflow);
  if (overflow > 0 || n > static_cast<long long>(kMaxThreads))
    throw OptionError(OptionKey::threads, OptionRule::above_maximum, py::str(threads).cast<std::string>(),
                      std::to_string(kMaxThreads));
  if (overflow < 0 || n < 0)
    throw OptionError(OptionKey::threads, OptionRule::not_a_count, py::str(threads).cast<std::string>(),
                      std::to_string(kMaxThreads));
  return check_threads_option(static_cast<unsigned>(n));
}

// The keyword options of a call, their names parsed (the face's syntax; the combination rules
// are prepare_request's). Made once per combination of keywords (dmlbits/_core.py caches them).
struct CallOptions {
  std::uint64_t serial = 0;  // which call_options() made them: the key of the plans made with them
  std::optional<BackendKind> backend;
  std::string isa;
  std::optional<std::string> adapter;
  std::optional<unsigned> threads;
  std::optional<FeatureLevel> level;
  std::optional<ShiftOverflow> shift_overflow;
  std::optional<DType> out_dtype;
};

CallOptions call_options(const std::string& backend, const std::string& feature_level,
                         const std::string& shift_overflow, py::handle out_dtype, py::handle threads,
                         const std::string& isa, const std::string& adapter) {
  static std::atomic<std::uint64_t> made{0};
  CallOptions o;
  o.serial = ++made;
  if (!backend.empty()) o.backend = parse_backend_option(backend);
  if (!feature_level.empty()) o.level = parse_feature_level_option(feature_level);
  if (!shift_overflow.empty()) o.shift_overflow = parse_shift_overflow_option(shift_overflow);
  o.out_dtype = dtype_keyword(out_dtype, OptionKey::out_dtype);
  o.threads = threads_keyword(threads);
  if (!isa.empty()) o.isa = parse_isa_option(isa);
  if (!adapter.empty()) o.adapter = adapter;
  return o;
}

// A request with these options, from Python (its messages name options as keywords).
OperationRequest new_request(int op_index, const CallOptions& o) {
  OperationRequest r;
  r.op = op_table()[static_cast<std::size_t>(op_index)].kind;
  r.backend = o.backend;
  r.isa = o.isa;
  r.adapter = o.adapter;
  r.threads = o.threads;
  r.level = o.level;
  r.shift_overflow = o.shift_overflow;
  r.out_dtype = o.out_dtype;
  return r;
}

// A Python float as literal text that is its exact value and reads as a float: the JSON reader
// then rounds it once to the dtype, as NumPy's np.float32(x) rounds the double x. (The shortest
// text that reads back as x, "{}", is not x: 1 + 2**-24 would round up to float32 from
// "1.0000000596046448" where NumPy rounds the double to even; and "-0" reads as the integer 0.)
// `%.767g` holds every significant digit a double has; the CLI writes a float as a one-element
// array literal ('[1.5]', '["nan"]'). A NaN keeps its sign and payload ("-nan(0x1)"), so that
// it converts as np.float32(x) converts it (dmlbits._core._operand writes a list's NaNs alike).
std::string float_literal_text(double x) {
  if (std::isnan(x)) {
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const std::uint64_t fraction = bits & 0x000fffffffffffffu;
    return fmt::format("[\"{}nan({:#x})\"]", bits >> 63 ? "-" : "", fraction);
  }
  if (std::isinf(x)) return x > 0 ? "[\"inf\"]" : "[\"-inf\"]";
  std::array<char, 1100> buf{};
  buf[0] = '[';
  const auto r = std::to_chars(buf.data() + 1, buf.data() + buf.size() - 4, x, std::chars_format::general, 767);
  std::string text(buf.data(), r.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // "-0" and "1" read as integers
  return text + "]";
}

// The operands of a call, into the request: arrays borrowed (kept alive by `keep`), Python's
// own numbers and strings as literal text, as on the command line: they take the other
// operand's dtype (or dtype=) and must fit it. A float, a one-element array literal
// (float_literal_text), makes a 0-d result 0-d again (`float_literal`). A masked array is
// refused: its mask would be lost (NumPy's ufuncs keep it; DirectML has none).
struct Operands {
  std::vector<py::array> keep;
  bool float_literal = false;
  bool all_arrays_0d = true;
};

bool is_masked(py::handle obj) {
  auto& api = py::detail::npy_api::get();
  if (Py_TYPE(obj.ptr()) == reinterpret_cast<PyTypeObject*>(api.PyArray_Type_))
    return false;  // the usual case, at once
  static const py::handle masked = py::object(py::module_::import("numpy.ma").attr("MaskedArray")).release();
  const int is = PyObject_IsInstance(obj.ptr(), masked.ptr());
  if (is < 0) throw py::error_already_set();
  return is != 0;
}

// How messages name operand i: "operand A", "operand B" for an operator; an expression's
// operands by their names, "operand 'a'" (`names`), as the library's run names them.
std::string operand_label(std::size_t i, const std::vector<std::string>* names) {
  if (names) return fmt::format("operand '{}'", (*names)[i]);
  return fmt::format("operand {}", static_cast<char>('A' + i));
}

Operands add_operands(OperationRequest& r, std::span<const py::handle> objs,
                      const std::vector<std::string>* names = nullptr) {
  Operands o;
  r.operands.reserve(objs.size());
  std::size_t i = 0;
  for (py::handle obj : objs) {
    py::object text;  // a list or tuple as its JSON literal text (dmlbits._core._operand)
    if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
      static const py::handle operand_text =
          py::object(py::module_::import("dmlbits._core").attr("_operand")).release();
      text = operand_text(obj);
      obj = text;
    }
    if (py::isinstance<py::str>(obj)) {
      // Python's text operands are literals only (its numbers and lists written as the command
      // line writes them, and the command line's strings): a file is read with read_tensor,
      // never named as an operand.
      std::string literal = obj.cast<std::string>();
      if (const OperandKind kind = classify_operand(literal);
          kind == OperandKind::file || kind == OperandKind::standard_input)
        throw Error(Errc::usage, fmt::format("{}: '{}' is not a literal (literals are integers: 5, -1, 0xff, "
                                             "0b101, or JSON arrays: [1, 2])",
                                             operand_label(i, names), literal));
      r.operands.emplace_back(std::move(literal));
    } else if (PyBool_Check(obj.ptr())) {
      r.operands.emplace_back(std::string(obj.ptr() == Py_True ? "1" : "0"));
    } else if (PyLong_CheckExact(obj.ptr())) {
      r.operands.emplace_back(py::str(obj).cast<std::string>());
    } else if (PyFloat_CheckExact(obj.ptr())) {
      r.operands.emplace_back(float_literal_text(PyFloat_AS_DOUBLE(obj.ptr())));
      o.float_literal = true;
    } else {
      if (is_masked(obj))
        throw Error(Errc::usage, fmt::format("{}: a masked array (numpy.ma) would lose its mask here; give "
                                             "its .data or .filled(value)",
                                             operand_label(i, names)));
      ArrayOperand a = [&] {
        try {
          return array_operand(obj, /*writable=*/i == 0 && r.in_place);
        } catch (const Error& e) {  // (the context is formatted only for an error: calls are small)
          rethrow_with_context(e, operand_label(i, names));
        }
      }();
      if (a.tensor.shape.rank() != 0) o.all_arrays_0d = false;
      r.operands.emplace_back(std::move(a.tensor));
      o.keep.push_back(std::move(a.array));
    }
    ++i;
  }
  return o;
}

Operands add_operands(OperationRequest& r, std::initializer_list<py::handle> objs) {
  return add_operands(r, std::span<const py::handle>(objs.begin(), objs.size()));
}

// Ctrl-C between chunks of a run, on the calling thread only (RunHooks::between_chunks): Python's
// own handler has only set a flag, which the main thread turns into KeyboardInterrupt here.
// Other threads see no signals (PyErr_CheckSignals does nothing there), so their runs go on.
void check_signals() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

// The backends of this thread's calls: created once per thread and options (a D3D12 device costs
// tens of milliseconds, and a 4x4 call should cost about a microsecond). Per thread, since a
// backend runs one operation at a time.
BackendCache& thread_backends() {
  thread_local BackendCache cache;
  return cache;
}

// Calls whose operands and result are at most this many elements keep the GIL while they run:
// releasing and taking it back costs more than such an operation (NumPy's ufuncs keep it
// below a similar size, 500 elements), and no other thread could do much meanwhile.
constexpr std::uint64_t kHoldGilElements = 4096;

// Calls of at most this many elements leave a plan for the next call like them (up to 4 MiB
// of uint32: under a millisecond of work, so that Ctrl-C, which a planned run does not look
// for, still stops a loop of them at once). Above kHoldGilElements a planned run releases the
// GIL as the full path does. At 32 KiB to 1 MiB the full path cost 2-3 us more than a plan.
constexpr std::uint64_t kPlanElements = std::uint64_t{1} << 20;

// The broadcast bound of `r` (each axis' largest size; the result's shape when the shapes
// broadcast) where it is one execution on borrowed C-order arrays and short literals, else
// UINT64_MAX; values above kPlanElements are reported as kPlanElements + 1. A size guess for
// the GIL and plans only; the library checks.
std::uint64_t call_bound(const OperationRequest& r) {
  constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
  if (r.repeat + r.warmup > 1) return kNone;
  std::array<std::uint64_t, kMaxRank> bound{};  // right-aligned, as NumPy broadcasts
  for (const auto& operand : r.operands) {
    if (const auto* text = std::get_if<std::string>(&operand)) {
      if (text->size() > 64) return kNone;  // a long JSON literal takes a while to parse
      continue;
    }
    const auto& t = std::get<BorrowedTensor>(operand);
    if (!t.read_in_place()) return kNone;  // converted as it is read
    const auto dims = t.shape.dims();
    for (std::size_t i = 0; i < dims.size(); ++i)
      bound[kMaxRank - dims.size() + i] = std::max(bound[kMaxRank - dims.size() + i], dims[i]);
  }
  std::uint64_t n = 1;
  for (const std::uint64_t d : bound) {
    n *= std::max<std::uint64_t>(d, 1);
    if (n > kPlanElements) return kPlanElements + 1;
  }
  return n;
}

// A small call made again: the OperationPlan (request.hpp) that an accepted call of the same
// operator, options and operand dtypes and shapes left, on this thread. Nothing is kept of a
// refused call, and a plan is used only where fits() says the call is the same, so every
// refusal comes from run() and is worded afresh.
struct PlanKey {
  int op_index = 0;
  std::uint64_t options = 0;  // CallOptions::serial
  std::size_t count = 0;      // operands
  std::array<DType, 2> dtypes{};
  std::array<Shape, 2> shapes{};
  bool operator==(const PlanKey&) const = default;
};

struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const {
    std::uint64_t h = static_cast<std::uint64_t>(k.op_index) * 0x9E3779B97F4A7C15ull ^ k.options;
    const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001B3ull; };
    for (std::size_t i = 0; i < k.count; ++i) {
      mix(static_cast<std::uint64_t>(k.dtypes[i]));
      mix(k.shapes[i].rank());
      for (const std::uint64_t d : k.shapes[i].dims()) mix(d);
    }
    return static_cast<std::size_t>(h);
  }
};

PlanKey plan_key(int op_index, const CallOptions& options, std::span<const BorrowedTensor> operands) {
  PlanKey k{op_index, options.serial, operands.size(), {}, {}};
  for (std::size_t i = 0; i < operands.size() && i < 2; ++i) {
    k.dtypes[i] = operands[i].dtype;
    k.shapes[i] = operands[i].shape;
  }
  return k;
}

// Whether `k` is the key plan_key() would make of these: planned_call's check of the last plan,
// without copying the shapes or hashing.
bool same_key(const PlanKey& k, int op_index, const CallOptions& options, std::span<const BorrowedTensor> operands) {
  if (k.op_index != op_index || k.options != options.serial || k.count != operands.size()) return false;
  for (std::size_t i = 0; i < operands.size() && i < 2; ++i)
    if (k.dtypes[i] != operands[i].dtype || !(k.shapes[i] == operands[i].shape)) return false;
  return true;
}

// A thread's kept plans, and the entry its last planned call used, which a loop of the same call
// finds again with a comparison instead of copying a key and hashing it (an unordered_map's
// entries stay where they are until erased: clear() forgets the last one with them). (A plan
// holds its backend and operation by shared_ptr: the order in which the thread's thread_locals
// are destroyed does not matter.)
struct KeptPlans {
  std::unordered_map<PlanKey, OperationPlan, PlanKeyHash> map;
  const std::pair<const PlanKey, OperationPlan>* last = nullptr;
  bool empty() const { return map.empty(); }
  void clear() {
    map.clear();
    last = nullptr;
  }
};
KeptPlans& thread_plans() {
  thread_local KeptPlans plans;
  return plans;
}

// Kept plans per thread: when full, all are dropped and made again as calls come (as
// BackendCache drops its backends), so that shapes made and dropped by the thousand do not
// keep memory.
constexpr std::size_t kPlansPerThread = 256;

void keep_plan(PlanKey key, OperationPlan plan) {
  auto& plans = thread_plans();
  if (plans.map.size() >= kPlansPerThread) plans.clear();
  plans.map.insert_or_assign(std::move(key), std::move(plan));
}

// `obj` as an operand for a plan: a C-contiguous, aligned, native-endian ndarray (not a
// subclass: a masked array is refused on the full path) of a DirectML dtype (bool is uint8, as
// array_operand reads it). False for anything else, which the full path converts. `fortran`:
// a Fortran-contiguous one (and not C-contiguous) instead, as its transpose, which is in C order
// (the full path runs such calls on the transposes: runs_transposed).
bool plan_operand(PyObject* obj, BorrowedTensor& t, bool fortran = false) {
  auto& api = py::detail::npy_api::get();
  if (Py_TYPE(obj) != reinterpret_cast<PyTypeObject*>(api.PyArray_Type_)) return false;
  const auto* a = py::detail::array_proxy(obj);
  constexpr int c_order = py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_;
  const int needed =
      (fortran ? py::detail::npy_api::NPY_ARRAY_F_CONTIGUOUS_ : c_order) | py::detail::npy_api::NPY_ARRAY_ALIGNED_;
  if ((a->flags & needed) != needed || a->nd > static_cast<int>(kMaxRank)) return false;
  if (fortran && (a->flags & c_order)) return false;
  const auto* d = py::detail::array_descriptor_proxy(a->descr);
  if (d->byteorder == '>') return false;
  const auto dtype = dtype_of_type_number(d->type_num);
  if (!dtype) return false;
  std::array<std::uint64_t, kMaxRank> dims{};
  for (int i = 0; i < a->nd; ++i)
    dims[static_cast<std::size_t>(fortran ? a->nd - 1 - i : i)] = static_cast<std::uint64_t>(a->dimensions[i]);
  t.dtype = *dtype;
  t.shape = Shape(std::span<const std::uint64_t>(dims.data(), static_cast<std::size_t>(a->nd)));
  t.data = reinterpret_cast<const std::byte*>(a->data);
  return true;
}

// A new result as NumPy's ufuncs return it: a 0-d one as a NumPy scalar (np.bitwise_and(
// np.array(5), np.array(3)) is np.int64(1)); out= is returned as it is, 0-d or not.
py::object numpy_result(py::object result) {
  if (py::detail::array_proxy(result.ptr())->nd != 0) return result;
  return result[py::tuple()];
}

// The result of a call run on its operands' transposes (runs_transposed): the Fortran-ordered
// array of the operands' own shape, whose memory is the C-ordered result of `shape`, the
// transposed one.
py::array transposed_result(DType dtype, const Shape& shape) {
  Shape dims = shape;
  for (std::size_t i = 0; i < shape.rank(); ++i) dims[i] = shape[shape.rank() - 1 - i];
  return new_array(dtype, dims, true);
}

// A kept plan's run into `out`, which OperationPlan::fits accepted (it reads DMLBITS_ISA and
// DMLBITS_THREADS, where the keywords leave them, on every call, in one pass over the
// environment: a change applies to the next call, lib/docs/python.md; a value refused is
// refused the full way). The GIL is kept for small results, whose run costs less than
// releasing it, as NumPy's ufuncs keep it.
void run_plan(const OperationPlan& plan, std::span<const BorrowedTensor> inputs, const MutableTensorView& out) {
  if (out.shape.element_count() <= kHoldGilElements) {
    plan.run(inputs, out);
    return;
  }
  py::gil_scoped_release release;
  plan.run(inputs, out);
}

// The call through a kept plan, or a null object when there is none that fits (or the call is
// not one a plan runs: operands other than such arrays, out= that is not such an array or
// overlaps an operand, dtype=); the full path then makes it.
py::object planned_call(int op_index, py::handle a, py::handle b, py::handle out, const CallOptions& options) {
  auto& plans = thread_plans();
  if (plans.empty()) return {};
  std::array<BorrowedTensor, 2> operands;
  const std::size_t n = b.is_none() ? 1 : 2;
  const bool to_out = !out.is_none();
  const auto operands_fit = [&](bool fortran) {
    return plan_operand(a.ptr(), operands[0], fortran) && (n == 1 || plan_operand(b.ptr(), operands[1], fortran));
  };
  // Fortran-ordered operands (and out=, if given, Fortran-ordered too): their transposes, as
  // the full path runs them (the plan it kept is for those), the result Fortran-ordered.
  bool transposed = false;
  if (!operands_fit(false)) {
    if (!operands_fit(true)) return {};
    if (n == 2 && !(operands[0].shape == operands[1].shape)) return {};  // runs_transposed's rule: one shape
    transposed = true;
  }
  MutableTensorView buffer;
  if (to_out) {
    BorrowedTensor o;
    if (!plan_operand(out.ptr(), o, transposed) || (transposed && !(o.shape == operands[0].shape)) ||
        !(py::detail::array_proxy(out.ptr())->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) ||
        py::detail::array_descriptor_proxy(py::detail::array_proxy(out.ptr())->descr)->kind == 'b')
      return {};
    buffer = {o.dtype, o.shape, const_cast<std::byte*>(o.data)};
    for (std::size_t i = 0; i < n; ++i)
      if (overlaps(buffer.data, buffer.byte_size(), operands[i].data,
                   TensorView{operands[i].dtype, operands[i].shape, operands[i].data}.byte_size()))
        return {};
  }
  const std::span<const BorrowedTensor> given(operands.data(), n);
  if (!plans.last || !same_key(plans.last->first, op_index, options, given)) {
    const auto kept = plans.map.find(plan_key(op_index, options, given));
    if (kept == plans.map.end()) return {};
    plans.last = &*kept;
  }
  const OperationPlan& plan = plans.last->second;
  if (!to_out) {
    buffer.dtype = plan.output_dtype();
    buffer.shape = plan.output_shape();
  }
  if (!plan.fits(given, buffer)) return {};
  py::object result;
  if (to_out) {
    result = py::reinterpret_borrow<py::object>(out);
  } else if (transposed) {
    result = transposed_result(buffer.dtype, buffer.shape);
  } else {
    result = new_array(buffer.dtype, buffer.shape);
  }
  if (!to_out) buffer.data = reinterpret_cast<std::byte*>(py::detail::array_proxy(result.ptr())->data);
  run_plan(plan, given, buffer);
  return to_out ? result : numpy_result(std::move(result));
}

// What keeps a plan made for a call (keep_plan under its key).
using KeepPlan = std::function<void(OperationPlan, const PreparedRequest&)>;

// run(), and a plan for the next call like this one, given to `keep`, where the call is at most
// kPlanElements (call_bound) and `keep` is set. `allocate`: RunHooks::allocate_result.
RunResult run_request(OperationRequest r, const KeepPlan& keep = {},
                      std::function<MutableTensorView(DType, const Shape&)> allocate = {}) {
  const std::uint64_t bound = call_bound(r);
  const bool hold = bound <= kHoldGilElements;
  const bool plannable = keep && bound <= kPlanElements;
  const PreparedRequest p = prepare_request(std::move(r));
  RunHooks hooks;
  hooks.between_chunks = check_signals;
  hooks.allocate_result = std::move(allocate);
  const auto run_and_plan = [&] {
    RunResult result = run(p, hooks, &thread_backends());
    if (plannable)
      if (auto plan = plan_operation(p, thread_backends())) keep(std::move(*plan), p);
    return result;
  };
  if (hold) return run_and_plan();
  py::gil_scoped_release release;  // (the plans are this thread's: no other touches them)
  return run_and_plan();
}

// An operator's plan, kept under its PlanKey.
KeepPlan operator_plan_keeper(int op_index, const CallOptions& options) {
  return [op_index, &options](OperationPlan plan, const PreparedRequest& p) {
    std::array<BorrowedTensor, 2> operands;  // (plan_operation took only borrowed tensors)
    const std::size_t n = std::min<std::size_t>(p.request().operands.size(), 2);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& t = std::get<BorrowedTensor>(p.request().operands[i]);
      operands[i].dtype = t.dtype;
      operands[i].shape = t.shape;
    }
    keep_plan(plan_key(op_index, options, std::span<const BorrowedTensor>(operands.data(), n)), std::move(plan));
  };
}

// An expression's calls made again, as an operator's (PlanKey): the plan an accepted call of the
// same expression text, names, options and operand dtypes and shapes left on this thread, for
// calls whose names are all bound to arrays (a name bound to a literal is part of the graph).
struct ExpressionKey {
  std::string expression;
  std::vector<std::string> names;
  std::uint64_t options = 0;
  std::vector<std::pair<DType, Shape>> operands;
  bool operator==(const ExpressionKey&) const = default;
};

struct ExpressionKeyHash {
  std::size_t operator()(const ExpressionKey& k) const {
    std::uint64_t h = std::hash<std::string>()(k.expression) ^ k.options * 0x9E3779B97F4A7C15ull;
    const auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 0x100000001B3ull; };
    for (const auto& name : k.names) mix(std::hash<std::string>()(name));
    for (const auto& [dtype, shape] : k.operands) {
      mix(static_cast<std::uint64_t>(dtype));
      mix(shape.rank());
      for (const std::uint64_t d : shape.dims()) mix(d);
    }
    return static_cast<std::size_t>(h);
  }
};

// The plan, and for each of its inputs (the expression's names in order of first appearance,
// as the library's graph takes them) the position of its operand in the call's names.
struct ExpressionPlan {
  OperationPlan plan;
  std::vector<std::size_t> order;
};
using ExpressionPlanMap = std::unordered_map<ExpressionKey, ExpressionPlan, ExpressionKeyHash>;
ExpressionPlanMap& thread_expression_plans() {
  thread_local ExpressionPlanMap plans;
  return plans;
}

// out=: a writeable ndarray, not masked; its dtype (in either byte order) and shape must be
// the result's (checked by run()). `direct`: whether the result can be written into it as it is
// (C-contiguous and native); otherwise it is computed into memory of its own and copied, as
// NumPy writes a strided or byte-swapped out.
MutableTensorView out_buffer(const py::array& out, bool& direct) {
  const py::dtype rd = out.dtype();
  if (rd.kind() == 'b')
    throw Error(Errc::usage,
                fmt::format("out: has dtype {}, which no result has", py::str(rd.attr("str")).cast<std::string>()));
  if (is_masked(out))
    throw Error(Errc::usage, "out: a masked array (numpy.ma) would keep a mask the result does not set");
  if (!out.writeable()) throw Error(Errc::usage, "out: is read-only");
  direct = (out.flags() & py::array::c_style) && is_native(rd);
  const DType d = dtype_of(rd);
  if (static_cast<std::size_t>(out.ndim()) > kMaxRank)
    throw Error(Errc::usage, fmt::format("out: {} dimensions; a tensor has at most {}", out.ndim(), kMaxRank));
  std::array<std::uint64_t, kMaxRank> dims{};
  for (py::ssize_t i = 0; i < out.ndim(); ++i)
    dims[static_cast<std::size_t>(i)] = static_cast<std::uint64_t>(out.shape(i));
  return {d, Shape(std::span<const std::uint64_t>(dims.data(), static_cast<std::size_t>(out.ndim()))),
          static_cast<std::byte*>(const_cast<void*>(out.data()))};
}

// run_options()' result: the CallOptions in a capsule of this name (a capsule, not a pybind11
// class, so that run_fast finds them without pybind11's type lookup).
constexpr const char* kOptionsCapsule = "dmlbits.CallOptions";

py::capsule options_capsule(CallOptions o) {
  return py::capsule(new CallOptions(std::move(o)), kOptionsCapsule,
                     [](PyObject* c) { delete static_cast<CallOptions*>(PyCapsule_GetPointer(c, kOptionsCapsule)); });
}

const CallOptions& options_of(py::handle capsule) {
  auto* o = static_cast<const CallOptions*>(PyCapsule_GetPointer(capsule.ptr(), kOptionsCapsule));
  if (!o) throw py::error_already_set();
  return *o;
}

// Whether an array is laid out in Fortran order, contiguous or not (a step slice of a Fortran
// array): the steps of its dimensions longer than one grow with the dimension, over at least
// two such dimensions. Its transpose is then laid out in C order.
bool fortran_ordered(const py::detail::PyArray_Proxy* x) {
  if (x->flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) return false;
  Py_intptr_t previous = 0;
  int long_dims = 0;
  for (int i = 0; i < x->nd; ++i) {
    if (x->dimensions[i] <= 1) continue;
    const Py_intptr_t step = x->strides[i] < 0 ? -x->strides[i] : x->strides[i];
    if (long_dims > 0 && step <= previous) return false;
    previous = step;
    ++long_dims;
  }
  return long_dims >= 2;
}

// Whether a call without out= on these operands runs on its arrays' transposes: every array
// operand of more than 0 dimensions Fortran-ordered (fortran_ordered), all of one shape, and
// at least one; the others Python numbers or 0-d arrays. The transposes are in C order: read
// in place when contiguous, else converted as read like any strided view. The result, computed
// in C order for the transposed shape, is the Fortran-ordered array of the operands' shape, as
// NumPy's order='K' makes it. (Other layouts give a C-ordered result.) With `out` (not None):
// also out a plain ndarray, Fortran-contiguous, of the operands' shape, whose transpose, in C
// order, is then written directly (another out= is written through a temporary, as before).
bool runs_transposed(py::handle a, py::handle b, py::handle out = py::none()) {
  auto& api = py::detail::npy_api::get();
  const py::detail::PyArray_Proxy* first = nullptr;
  for (py::handle obj : {a, b}) {
    if (obj.is_none() && obj.ptr() == b.ptr()) continue;
    if (PyLong_CheckExact(obj.ptr()) || PyFloat_CheckExact(obj.ptr()) || PyBool_Check(obj.ptr())) continue;
    if (!api.PyArray_Check_(obj.ptr())) return false;
    const auto* x = py::detail::array_proxy(obj.ptr());
    if (x->nd == 0) continue;
    if (!fortran_ordered(x)) return false;
    if (first && (first->nd != x->nd || !std::equal(x->dimensions, x->dimensions + x->nd, first->dimensions)))
      return false;
    if (!first) first = x;
  }
  if (first == nullptr) return false;
  if (out.is_none()) return true;
  if (Py_TYPE(out.ptr()) != reinterpret_cast<PyTypeObject*>(api.PyArray_Type_)) return false;
  const auto* o = py::detail::array_proxy(out.ptr());
  return (o->flags & py::detail::npy_api::NPY_ARRAY_F_CONTIGUOUS_) &&
         !(o->flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) && o->nd == first->nd &&
         std::equal(o->dimensions, o->dimensions + o->nd, first->dimensions);
}

py::object transposed(py::handle obj) {
  if (!py::detail::npy_api::get().PyArray_Check_(obj.ptr())) return py::reinterpret_borrow<py::object>(obj);
  return obj.attr("T");
}

// What run_call and evaluate_call return: `out` (the result copied there from `temporary` where
// it went through one), else the result as NumPy's array (the memory allocate_result gave it, or
// the library's tensor); with `timing`, a (result, timing dict) tuple. A float is bound as a
// one-element list literal (float_literal_text): a result of 0-d arrays and numbers stays 0-d,
// as NumPy's does.
py::object call_result(RunResult& res, py::array* out, py::array* temporary, py::object& allocated, const Operands& in,
                       bool timing, py::handle given_out = py::handle()) {
  py::object result;
  if (out) {
    if (temporary) (*out)[py::ellipsis()] = *temporary;
    // (`out` may be a view of the out= given, `given_out`: its transpose.)
    result = given_out ? py::reinterpret_borrow<py::object>(given_out) : py::object(*out);
  } else {
    py::array arr =
        allocated ? py::reinterpret_steal<py::array>(allocated.release()) : tensor_array(std::move(*res.result));
    if (in.float_literal && in.all_arrays_0d && arr.ndim() == 1 && arr.shape(0) == 1)
      arr = arr.attr("reshape")(py::tuple());
    result = numpy_result(std::move(arr));
  }
  if (!timing) return result;
  return py::make_tuple(result, from_json_text(timing_json(res)));
}

// An operator function's call (functions.hpp): the operands and keywords as given (lists,
// tuples and a dtype= other than a name are turned into the request's terms here, so that the
// Python function is a single call), `options` made by run_options.
py::object run_call(int op_index, py::handle a, py::handle b, py::handle out, py::handle dtype,
                    const CallOptions& options, bool timing, int repeat, int warmup) {
  const bool plannable = !timing && repeat == 1 && warmup == 0 && dtype.is_none();
  if (plannable)
    if (py::object result = planned_call(op_index, a, b, out, options)) return result;
  OperationRequest r = new_request(op_index, options);
  r.dtype = dtype_keyword(dtype);
  r.repeat = repeat;
  r.warmup = warmup;
  r.timing = timing;  // without timing=True nothing is measured
  r.output = OutputKind::memory;
  // out=: where it is input A's own memory, whole, the operation runs in place (refused as
  // DirectML refuses it for popcount); where it overlaps an input otherwise, the result is
  // computed into memory of its own and copied; else it is written straight into out.
  py::array out_array, temporary;  // (a default py::array is an empty array, not a null handle)
  bool through_temporary = false;
  const bool to_out = !out.is_none();
  if (to_out && !py::isinstance<py::array>(out)) throw Error(Errc::usage, "out: expected a numpy.ndarray");
  // All Fortran-ordered (out= too, if given): on the transposes (runs_transposed).
  const bool transpose = runs_transposed(a, b, out);
  py::object ta, tb;
  if (transpose) {
    ta = transposed(a);
    a = ta;
    if (!b.is_none()) {
      tb = transposed(b);
      b = tb;
    }
  }
  if (to_out) {
    // (The transpose of out is a view of it: the result written there is out's.)
    out_array = transpose ? py::reinterpret_borrow<py::array>(out).attr("T").cast<py::array>()
                          : py::reinterpret_borrow<py::array>(out);
    if (py::isinstance<py::array>(a)) {
      const auto a0 = py::reinterpret_borrow<py::array>(a);
      r.in_place = a0.data() == out_array.data() && a0.nbytes() == out_array.nbytes() &&
                   a0.dtype().equal(out_array.dtype()) && a0.ndim() == out_array.ndim() &&
                   std::equal(a0.shape(), a0.shape() + a0.ndim(), out_array.shape()) &&
                   (a0.flags() & py::array::c_style) && is_native(a0.dtype()) && a0.dtype().kind() != 'b';
    }
  }
  Operands in = b.is_none() ? add_operands(r, {a}) : add_operands(r, {a, b});
  if (to_out) {
    bool direct = true;
    MutableTensorView buffer = out_buffer(out_array, direct);
    if (!direct) {
      through_temporary = true;
      temporary = new_array(buffer.dtype, buffer.shape);
      buffer.data = static_cast<std::byte*>(temporary.mutable_data());
    }
    if (r.in_place) {
      r.output = OutputKind::none;  // the result is in A's memory, which is out
    } else {
      // An input that out overlaps would be overwritten while it is read (in place, or
      // converted chunk by chunk as the run goes): the result goes to a temporary of out's
      // dtype and shape, then to out.
      for (const auto& operand : r.operands)
        if (const auto* t = std::get_if<BorrowedTensor>(&operand); t && !through_temporary)
          if (const auto [low, high] = byte_extent(*t);
              overlaps(buffer.data, buffer.byte_size(), low, static_cast<std::size_t>(high - low))) {
            through_temporary = true;
            temporary = new_array(buffer.dtype, buffer.shape);
            buffer.data = static_cast<std::byte*>(temporary.mutable_data());
          }
      r.output = OutputKind::buffer;
      r.buffer = buffer;
    }
  }
  const bool arrays = in.keep.size() == r.operands.size();
  // Without out=, the result is NumPy's own array, allocated by NumPy as its results are (no
  // mapping of the library's per result; issue 37), once the library knows its dtype and shape.
  // (A py::object, not a py::array: a default py::array is an empty array NumPy makes.)
  py::object allocated;
  std::function<MutableTensorView(DType, const Shape&)> allocate;
  if (!to_out)
    allocate = [&allocated, transpose](DType d, const Shape& shape) {
      py::gil_scoped_acquire gil;
      allocated = transpose ? transposed_result(d, shape) : new_array(d, shape);
      return MutableTensorView{d, shape, reinterpret_cast<std::byte*>(py::detail::array_proxy(allocated.ptr())->data)};
    };
  const KeepPlan keep =
      plannable && arrays && !through_temporary ? operator_plan_keeper(op_index, options) : KeepPlan();
  RunResult res = run_request(std::move(r), keep, std::move(allocate));
  return call_result(res, to_out ? &out_array : nullptr, through_temporary ? &temporary : nullptr, allocated, in,
                     timing, out);
}

// dmlbits.evaluate: `expression` with names[i] bound to operands[i] (arrays, or Python's
// numbers, lists and strings as literal text, as an operator's operands are), run as one graph
// (the library's OperationRequest::expression). The GIL, Ctrl-C, out= and the result's memory
// as run_call: never in place (the library refuses it for an expression), so out= that overlaps
// an operand is written through a temporary. `explain_only`: the graph's description (what
// `dmlbits eval --explain` prints) as a dict, nothing run.
// An expression's call through a kept plan (ExpressionKey), or a null object where there is none
// that fits or the call is not one a plan runs (as planned_call: every operand such an array,
// out= such an array overlapping none); the full path then makes it.
py::object planned_evaluate(const std::string& expression, const std::vector<std::string>& names,
                            const py::list& operands, py::handle out, const CallOptions& options) {
  auto& plans = thread_expression_plans();
  if (plans.empty() || names.size() != operands.size()) return {};
  ExpressionKey key{expression, names, options.serial, {}};
  std::vector<BorrowedTensor> given(operands.size());
  key.operands.reserve(operands.size());
  for (std::size_t i = 0; i < given.size(); ++i) {
    if (!plan_operand(PyList_GET_ITEM(operands.ptr(), static_cast<Py_ssize_t>(i)), given[i])) return {};
    key.operands.emplace_back(given[i].dtype, given[i].shape);
  }
  const bool to_out = !out.is_none();
  MutableTensorView buffer;
  if (to_out) {
    BorrowedTensor o;
    if (!plan_operand(out.ptr(), o) ||
        !(py::detail::array_proxy(out.ptr())->flags & py::detail::npy_api::NPY_ARRAY_WRITEABLE_) ||
        py::detail::array_descriptor_proxy(py::detail::array_proxy(out.ptr())->descr)->kind == 'b')
      return {};
    buffer = {o.dtype, o.shape, const_cast<std::byte*>(o.data)};
    for (const BorrowedTensor& t : given)
      if (overlaps(buffer.data, buffer.byte_size(), t.data, TensorView{t.dtype, t.shape, t.data}.byte_size()))
        return {};
  }
  const auto kept = plans.find(key);
  if (kept == plans.end()) return {};
  const OperationPlan& plan = kept->second.plan;
  std::vector<BorrowedTensor> inputs;
  inputs.reserve(given.size());
  for (const std::size_t i : kept->second.order) inputs.push_back(given[i]);
  if (!to_out) {
    buffer.dtype = plan.output_dtype();
    buffer.shape = plan.output_shape();
  }
  if (!plan.fits(inputs, buffer)) return {};
  py::object result =
      to_out ? py::reinterpret_borrow<py::object>(out) : py::object(new_array(buffer.dtype, buffer.shape));
  if (!to_out) buffer.data = reinterpret_cast<std::byte*>(py::detail::array_proxy(result.ptr())->data);
  run_plan(plan, inputs, buffer);
  return to_out ? result : numpy_result(std::move(result));
}

py::object evaluate_call(const std::string& expression, const std::vector<std::string>& names, py::list operands,
                         py::handle out, py::handle dtype, py::handle options_capsule, bool timing, int repeat,
                         int warmup, bool explain_only) {
  const CallOptions& options = options_of(options_capsule);
  const bool plannable = !explain_only && !timing && repeat == 1 && warmup == 0 && dtype.is_none();
  if (plannable)
    if (py::object result = planned_evaluate(expression, names, operands, out, options)) return result;
  OperationRequest r = new_request(0, options);
  r.expression = expression;
  r.names = names;
  r.dtype = dtype_keyword(dtype);
  r.repeat = repeat;
  r.warmup = warmup;
  r.timing = timing;
  r.explain_only = explain_only;
  r.output = explain_only ? OutputKind::none : OutputKind::memory;
  if (names.size() != operands.size()) throw std::invalid_argument("evaluate(): a name per operand");
  std::vector<py::handle> objs(operands.begin(), operands.end());
  Operands in = add_operands(r, objs, &names);
  if (explain_only) return from_json_text(run_request(std::move(r)).op.explain_json());
  py::array out_array, temporary;
  bool through_temporary = false;
  const bool to_out = !out.is_none();
  if (to_out) {
    if (!py::isinstance<py::array>(out)) throw Error(Errc::usage, "out: expected a numpy.ndarray");
    out_array = py::reinterpret_borrow<py::array>(out);
    bool direct = true;
    MutableTensorView buffer = out_buffer(out_array, direct);
    through_temporary = !direct;
    for (const auto& operand : r.operands)
      if (const auto* t = std::get_if<BorrowedTensor>(&operand); t && !through_temporary)
        if (const auto [low, high] = byte_extent(*t);
            overlaps(buffer.data, buffer.byte_size(), low, static_cast<std::size_t>(high - low)))
          through_temporary = true;
    if (through_temporary) {
      temporary = new_array(buffer.dtype, buffer.shape);
      buffer.data = static_cast<std::byte*>(temporary.mutable_data());
    }
    r.output = OutputKind::buffer;
    r.buffer = buffer;
  }
  py::object allocated;
  std::function<MutableTensorView(DType, const Shape&)> allocate;
  if (!to_out)
    allocate = [&allocated](DType d, const Shape& shape) {
      py::gil_scoped_acquire gil;
      allocated = new_array(d, shape);
      return MutableTensorView{d, shape, reinterpret_cast<std::byte*>(py::detail::array_proxy(allocated.ptr())->data)};
    };
  KeepPlan keep;
  if (plannable && in.keep.size() == r.operands.size() && !through_temporary)
    keep = [&options](OperationPlan plan, const PreparedRequest& p) {
      ExpressionKey key{p.request().expression, p.request().names, options.serial, {}};
      for (const auto& operand : p.request().operands) {
        const auto& t = std::get<BorrowedTensor>(operand);
        key.operands.emplace_back(t.dtype, t.shape);
      }
      std::vector<std::size_t> order;
      for (const std::string& name : expression_names(key.expression)) {
        const auto at = std::find(key.names.begin(), key.names.end(), name);
        if (at == key.names.end()) return;  // (a name bound to a literal: no plan kept)
        order.push_back(static_cast<std::size_t>(at - key.names.begin()));
      }
      if (order.size() != key.names.size()) return;
      auto& plans = thread_expression_plans();
      if (plans.size() >= kPlansPerThread) plans.clear();
      plans.insert_or_assign(std::move(key), ExpressionPlan{std::move(plan), std::move(order)});
    };
  RunResult res = run_request(std::move(r), keep, std::move(allocate));
  return call_result(res, to_out ? &out_array : nullptr, through_temporary ? &temporary : nullptr, allocated, in,
                     timing);
}

// Whether a keyword's value can stand for itself in KeywordCache: None, and values that cannot
// change once made (str, int, bool, float, NumPy's dtypes, built-in types such as numpy.uint8).
bool immutable_keyword(PyObject* v) {
  if (v == Py_None || PyUnicode_CheckExact(v) || PyLong_CheckExact(v) || PyBool_Check(v) || PyFloat_CheckExact(v))
    return true;
  if (PyType_Check(v)) return !(reinterpret_cast<PyTypeObject*>(v)->tp_flags & Py_TPFLAGS_HEAPTYPE);
  return PyObject_TypeCheck(v, reinterpret_cast<PyTypeObject*>(py::detail::npy_api::get().PyArrayDescr_Type_));
}

// The options of the keywords backend, feature_level, shift_overflow, out_dtype, threads, isa
// and adapter as given, by the identity of the values: a call passes the same objects again
// (its defaults, its literals), and comparing seven pointers costs nothing beside even
// dmlbits._core._options' functools.lru_cache (a tenth of a 4x4 call). The values are held, so
// that an identity is never reused while it is a key; only immutable ones are kept
// (immutable_keyword). A miss, or a refusal, goes to _options, which parses them. Under the GIL.
class KeywordCache {
 public:
  static constexpr std::size_t kKeywords = 7;

  py::handle options(PyObject* const* values) {
    for (Entry& e : entries_)
      if (e.options && std::equal(values, values + kKeywords, e.values.begin())) return e.options;
    static const py::handle parse = py::object(py::module_::import("dmlbits._core").attr("_options")).release();
    py::object made = py::reinterpret_steal<py::object>(PyObject_Vectorcall(parse.ptr(), values, kKeywords, nullptr));
    if (!made) throw py::error_already_set();
    if (!std::all_of(values, values + kKeywords, immutable_keyword)) return remember(std::move(made));
    Entry& e = entries_[next_++ % entries_.size()];
    e.clear();
    for (std::size_t i = 0; i < kKeywords; ++i) e.values[i] = Py_NewRef(values[i]);
    e.options = made.release().ptr();
    return e.options;
  }

 private:
  struct Entry {
    std::array<PyObject*, kKeywords> values{};
    PyObject* options = nullptr;
    void clear() {
      for (PyObject*& v : values) Py_CLEAR(v);
      Py_CLEAR(options);
    }
  };
  // One not kept: alive until the next such call (the caller borrows it for this call).
  py::handle remember(py::object made) {
    last_ = std::move(made);
    return last_;
  }
  std::array<Entry, 16> entries_{};
  std::size_t next_ = 0;
  py::object last_;
};

// Never destroyed (Python objects outlive no interpreter).
KeywordCache& keyword_cache() {
  static auto* cache = new KeywordCache();
  return *cache;
}

// run(op, x1, x2, out, dtype, backend, feature_level, shift_overflow, out_dtype, threads, isa,
// adapter, timing, repeat, warmup), its kRunArguments values borrowed (functions.hpp): what each
// operator function calls, and the extension's `run`. Without pybind11's dispatcher (argument
// casters, the type lookup of the options cost about a tenth of a small call), and with the
// keywords' options kept by identity (KeywordCache). Exceptions are translated as pybind11's
// dispatcher translates them.
PyObject* run_values(PyObject* const* args) {
  try {
    const long op_index = PyLong_AsLong(args[kRunOp]);
    if (op_index == -1 && PyErr_Occurred()) return nullptr;
    if (op_index < 0 || static_cast<std::size_t>(op_index) >= op_table().size()) {
      PyErr_SetString(PyExc_ValueError, "run(): no such operator");
      return nullptr;
    }
    const py::handle options = keyword_cache().options(args + kRunBackend);
    const int timing = PyObject_IsTrue(args[kRunTiming]);
    if (timing < 0) return nullptr;
    const long repeat = PyLong_AsLong(args[kRunRepeat]);
    if (repeat == -1 && PyErr_Occurred()) return nullptr;
    const long warmup = PyLong_AsLong(args[kRunWarmup]);
    if (warmup == -1 && PyErr_Occurred()) return nullptr;
    constexpr long kMax = std::numeric_limits<int>::max(), kMin = std::numeric_limits<int>::min();
    if (repeat > kMax || repeat < kMin || warmup > kMax || warmup < kMin) {
      PyErr_SetString(PyExc_OverflowError, "repeat and warmup must fit a C int");
      return nullptr;
    }
    return run_call(static_cast<int>(op_index), args[kRunX1], args[kRunX2], args[kRunOut], args[kRunDtype],
                    options_of(options), timing != 0, static_cast<int>(repeat), static_cast<int>(warmup))
        .release()
        .ptr();
  } catch (py::error_already_set& e) {
    e.restore();
    return nullptr;
  } catch (...) {
    if (py::detail::apply_exception_translators(py::detail::get_local_internals().registered_exception_translators) ||
        py::detail::apply_exception_translators(py::detail::get_internals().registered_exception_translators))
      return nullptr;
    PyErr_SetString(PyExc_SystemError, "dmlbits: an exception escaped the translators");
    return nullptr;
  }
}

PyObject* run_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != kRunArguments) {
    PyErr_Format(PyExc_TypeError, "run() takes %d arguments (%zd given)", static_cast<int>(kRunArguments), nargs);
    return nullptr;
  }
  return run_values(args);
}

PyMethodDef run_fast_def = {
    "run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&run_fast)), METH_FASTCALL,
    "run(op, x1, x2, out, dtype, backend, feature_level, shift_overflow, out_dtype, threads, isa, adapter, timing, "
    "repeat, warmup)"};

py::object explain(int op_index, py::object a, py::object b, py::handle dtype, py::handle options) {
  OperationRequest r = new_request(op_index, options_of(options));
  r.dtype = dtype_keyword(dtype);
  r.explain_only = true;
  r.output = OutputKind::none;
  Operands in = b.is_none() ? add_operands(r, {a}) : add_operands(r, {a, b});
  const RunResult res = run_request(std::move(r));
  return from_json_text(res.op.explain_json());
}

// The support table: the document `dmlbits ops --json` prints (ops_json_text).
py::object ops(const std::string& level_name) {
  std::optional<FeatureLevel> level;
  if (!level_name.empty()) level = parse_feature_level_option(level_name);
  return from_json(nlohmann::json::parse(ops_json_text(level)));
}

py::array read_tensor_array(const std::string& path, py::handle dtype) {
  const std::optional<DType> default_dtype = dtype_keyword(dtype);
  Tensor t = [&] {
    py::gil_scoped_release release;
    return read_tensor_path(path, default_dtype);
  }();
  return tensor_array(std::move(t));
}

// A golden file, read as check() and assert_bits_equal() read one: it names its data type.
py::array read_golden_array(const std::string& path) {
  Tensor t = [&] {
    py::gil_scoped_release release;
    return read_golden_file(path);
  }();
  return tensor_array(std::move(t));
}

void write_tensor_array(py::object array, const std::string& path, const std::string& format_name, bool hex) {
  const CArray a = c_array(array);
  py::gil_scoped_release release;
  write_tensor_path(a.view, path, format_name, hex);
}

// (equal, the --expect report) for two arrays compared bit for bit.
py::tuple compare(py::object actual, py::object expected, std::size_t max_listed, const std::string& label) {
  const CArray a = c_array(actual), e = c_array(expected);
  const std::optional<std::string> report = compare_bits(a.view, e.view, max_listed, label);
  return py::make_tuple(!report, report.value_or(std::string()));
}

py::list check(const std::string& manifest, const CheckOptions& options) {
  CheckSummary summary = [&] {
    py::gil_scoped_release release;
    return run_check(manifest, options);
  }();
  // An interrupted check (no golden updated) is KeyboardInterrupt, as an interrupted run is.
  if (summary.interrupted) throw Error(Errc::interrupted, "interrupted");
  py::list cases;
  for (const auto& c : summary.cases) {
    const char* outcome = c.outcome == CaseResult::Outcome::pass   ? "pass"
                          : c.outcome == CaseResult::Outcome::fail ? "fail"
                                                                   : "error";
    cases.append(py::make_tuple(c.name, outcome, case_detail(c), case_report(c), c.seconds, c.updated, c.golden));
  }
  return cases;
}

}  // namespace
}  // namespace dmlbits::python

PYBIND11_MODULE(_dmlbits, m) {
  using namespace dmlbits;
  using namespace dmlbits::python;
  m.doc() = "dmlbits' extension; use the `dmlbits` package, not this module.";

  // dmlbits::Error becomes the dmlbits.Error subclass of its code (dmlbits/_errors.py);
  // an interrupted run becomes KeyboardInterrupt.
  py::object errors = py::module_::import("dmlbits._errors");
  static py::handle error_for_code = py::object(errors.attr("error_for_code")).release();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const OptionError& e) {  // an option's refusal, in Python's words
      py::object cls = error_for_code(errc_info(e.code()).name);
      PyErr_SetObject(cls.ptr(), py::str(option_text(e)).ptr());
    } catch (const Error& e) {
      if (e.code() == Errc::interrupted) {
        PyErr_SetNone(PyExc_KeyboardInterrupt);
        return;
      }
      py::object cls = error_for_code(errc_info(e.code()).name);
      PyErr_SetObject(cls.ptr(), py::str(e.what()).ptr());
    }
  });

  m.def("errc_table", [] {
    py::list rows;
    for (const auto& e : errc_table())
      rows.append(py::make_tuple(std::string(e.name), e.exit_status, std::string(e.description)));
    return rows;
  });
  m.def("version", [] { return std::string(DMLBITS_VERSION); });

  m.def(
      "run_options", [](const std::string& backend, const std::string& feature_level, const std::string& shift_overflow,
                        py::handle out_dtype, py::handle threads, const std::string& isa, const std::string& adapter) {
        return options_capsule(call_options(backend, feature_level, shift_overflow, out_dtype, threads, isa, adapter));
      });
  // Whether backend= computes on CPU threads (threads= applies), by the backend table.
  m.def("backend_uses_cpu", [](const std::string& name) { return backend_uses_cpu(parse_backend_option(name)); });
  m.add_object("run",
               py::reinterpret_steal<py::object>(PyCFunction_NewEx(&run_fast_def, nullptr, m.attr("__name__").ptr())));
  add_operator_functions(m, &run_values);
  m.def("explain", &explain);
  m.def("evaluate", &evaluate_call);
  // The names an expression binds, in order of first appearance (its syntax refused as
  // evaluate refuses it: UsageError with a caret).
  m.def("expression_names", &expression_names);
  m.def("ops", &ops);
  m.def("devices", [] {
    const std::string json = [] {
      py::gil_scoped_release release;
      return devices_json(list_devices());
    }();
    return from_json(nlohmann::json::parse(json));
  });
  // Interpreter exit: Python's atexit handlers run before the C library's exit handlers, and so
  // before any a Vulkan driver registered (release_gpu_devices() says why that matters). This
  // thread's kept backends and plans are dropped, then the devices nobody holds are released.
  // Other threads' are dropped as those threads end (a Dask worker's pool threads are joined
  // before atexit runs); a device a thread still holds here is never released.
  m.def("_release_devices", [] {
    thread_plans().clear();
    thread_expression_plans().clear();
    thread_backends().clear();
    py::gil_scoped_release release;
    release_gpu_devices();
  });
  py::module_::import("atexit").attr("register")(m.attr("_release_devices"));
  m.def("machine_threads", &machine_cpu_threads);
  m.def("read_tensor", &read_tensor_array);
  m.def("read_golden", &read_golden_array);
  m.def("write_tensor", &write_tensor_array);
  m.def("compare", &compare);

  py::class_<CheckOptions>(m, "CheckOptions")
      .def(py::init<>())
      // "" = each case's own backend, as `check` without --backend.
      .def_property(
          "backend",
          [](const CheckOptions& o) { return o.backend ? std::string(backend_name(*o.backend)) : std::string(); },
          [](CheckOptions& o, const std::string& name) {
            if (name.empty()) {
              o.backend.reset();
              return;
            }
            o.backend = parse_backend_option(name);
          })
      .def_readwrite("isa", &CheckOptions::isa)
      .def_readwrite("adapter", &CheckOptions::adapter)
      .def_readwrite("filter", &CheckOptions::filter)
      .def_readwrite("update", &CheckOptions::update)
      .def_readwrite("jobs", &CheckOptions::jobs)
      .def_readwrite("max_listed", &CheckOptions::max_listed);
  m.def("check", &check);
  add_ufuncs(m);
}
