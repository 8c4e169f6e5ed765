// Built-in operator functions (functions.hpp). Each function is a PyCFunction of its own, with
// no `self` (so that pickle finds it by its module and name, as it finds a `def`); what tells
// them apart is their C entry point, one of kSlots instantiations of slot_call<I>, each reading
// its OperatorFunction from slots[I].
#include "functions.hpp"

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace dmlbits::python {
namespace {

namespace py = pybind11;

struct OperatorFunction {
  long op_index = 0;
  int arity = 2;
  bool shift_overflow = false, out_dtype = false;
  std::string name, module, doc;  // doc: the text signature, then the docstring
  PyObject* index = nullptr;      // op_index as run() takes it
  PyMethodDef def{};
  PyObject* function = nullptr;
};

constexpr std::size_t kSlots = 64;
std::array<OperatorFunction*, kSlots> slots{};  // never freed: the functions live as long as the process
std::size_t used = 0;
RunFunction run_function = nullptr;

// The keywords in the signature's order, and where each goes among run()'s arguments.
struct Keyword {
  const char* name;
  int argument;
  PyObject* interned = nullptr;
};
std::array<Keyword, 12> keywords = {{{"out", kRunOut},
                                     {"dtype", kRunDtype},
                                     {"shift_overflow", kRunShiftOverflow},
                                     {"out_dtype", kRunOutDtype},
                                     {"backend", kRunBackend},
                                     {"feature_level", kRunFeatureLevel},
                                     {"threads", kRunThreads},
                                     {"isa", kRunIsa},
                                     {"adapter", kRunAdapter},
                                     {"timing", kRunTiming},
                                     {"repeat", kRunRepeat},
                                     {"warmup", kRunWarmup}}};

// The defaults, as the text signature shows them. The same objects on every call: the
// extension keeps resolved options by the identity of the values given (module.cpp's
// KeywordCache).
std::array<PyObject*, kRunArguments> defaults{};

bool takes(const OperatorFunction& f, int argument) {
  return (argument != kRunShiftOverflow || f.shift_overflow) && (argument != kRunOutDtype || f.out_dtype);
}

std::string text_signature(const OperatorFunction& f) {
  std::string s = f.name + (f.arity == 1 ? "(x, /, out=None, *" : "(x1, x2, /, out=None, *");
  for (const Keyword& k : keywords) {
    if (k.argument == kRunOut || !takes(f, k.argument)) continue;
    const PyObject* d = defaults[static_cast<std::size_t>(k.argument)];
    const char* shown = d == Py_None ? "None" : d == Py_False ? "False" : nullptr;
    s += fmt::format(", {}={}", k.name,
                     shown                       ? shown
                     : k.argument == kRunBackend ? "'auto'"
                     : k.argument == kRunRepeat  ? "1"
                                                 : "0");
  }
  return s + ")";
}

// Python's words for a call that does not fit the signature (as a `def` would refuse it).
PyObject* refuse(const OperatorFunction& f, Py_ssize_t nargs, PyObject* kwnames, Py_ssize_t k) {
  if (kwnames == nullptr || k < 0) {
    if (nargs > f.arity + 1)
      PyErr_Format(PyExc_TypeError, "%s() takes from %d to %d positional arguments but %zd were given", f.name.c_str(),
                   f.arity, f.arity + 1, nargs);
    else if (f.arity - nargs == 2)
      PyErr_Format(PyExc_TypeError, "%s() missing 2 required positional arguments: 'x1' and 'x2'", f.name.c_str());
    else
      PyErr_Format(PyExc_TypeError, "%s() missing 1 required positional argument: '%s'", f.name.c_str(),
                   f.arity == 1 ? "x" : "x2");
    return nullptr;
  }
  PyObject* name = PyTuple_GET_ITEM(kwnames, k);
  const bool positional_only = PyUnicode_CompareWithASCIIString(name, f.arity == 1 ? "x" : "x1") == 0 ||
                               (f.arity == 2 && PyUnicode_CompareWithASCIIString(name, "x2") == 0);
  if (positional_only)
    PyErr_Format(PyExc_TypeError, "%s() got some positional-only arguments passed as keyword arguments: '%U'",
                 f.name.c_str(), name);
  else if (PyUnicode_CompareWithASCIIString(name, "out") == 0)
    PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument 'out'", f.name.c_str());
  else PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", f.name.c_str(), name);
  return nullptr;
}

// As a `def` checks a call: the keywords first, then the count of positional arguments.
PyObject* call(const OperatorFunction& f, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  std::array<PyObject*, kRunArguments> v = defaults;
  if (kwnames != nullptr) {
    const Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < n; ++k) {
      PyObject* name = PyTuple_GET_ITEM(kwnames, k);
      const Keyword* found = nullptr;
      for (const Keyword& kw : keywords)  // the names of a call's keywords are interned: compared by identity
        if (kw.interned == name) {
          found = &kw;
          break;
        }
      if (found == nullptr)
        for (const Keyword& kw : keywords)
          if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, kw.name) == 0) {
            found = &kw;
            break;
          }
      if (found == nullptr || !takes(f, found->argument) || (found->argument == kRunOut && nargs > f.arity))
        return refuse(f, nargs, kwnames, k);
      v[static_cast<std::size_t>(found->argument)] = args[nargs + k];
    }
  }
  if (nargs < f.arity || nargs > f.arity + 1) return refuse(f, nargs, nullptr, -1);
  v[kRunOp] = f.index;
  v[kRunX1] = args[0];
  if (f.arity == 2) v[kRunX2] = args[1];
  if (nargs > f.arity) v[kRunOut] = args[f.arity];
  return run_function(v.data());
}

template <std::size_t I>
PyObject* slot_call(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return call(*slots[I], args, nargs, kwnames);
}

using FastWithKeywords = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);
template <std::size_t... I>
constexpr std::array<FastWithKeywords, sizeof...(I)> slot_calls(std::index_sequence<I...>) {
  return {&slot_call<I>...};
}
constexpr auto kSlotCalls = slot_calls(std::make_index_sequence<kSlots>());

py::object operator_function(long op_index, const std::string& name, const std::string& module, int arity,
                             bool shift_overflow, bool out_dtype, const std::string& doc) {
  if (arity != 1 && arity != 2) throw py::value_error("operator_function(): arity is 1 or 2");
  for (std::size_t i = 0; i < used; ++i) {
    const OperatorFunction& f = *slots[i];
    if (f.op_index == op_index && f.name == name && f.module == module && f.arity == arity &&
        f.shift_overflow == shift_overflow && f.out_dtype == out_dtype && f.doc.ends_with("\n--\n\n" + doc))
      return py::reinterpret_borrow<py::object>(f.function);
  }
  if (used == kSlots)
    throw py::value_error(fmt::format("operator_function(): at most {} operator functions can be made", kSlots));
  auto f = std::make_unique<OperatorFunction>();
  f->op_index = op_index;
  f->arity = arity;
  f->shift_overflow = shift_overflow;
  f->out_dtype = out_dtype;
  f->name = name;
  f->module = module;
  f->doc = text_signature(*f) + "\n--\n\n" + doc;
  f->index = PyLong_FromLong(op_index);
  if (f->index == nullptr) throw py::error_already_set();
  f->def = {f->name.c_str(), reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(kSlotCalls[used])),
            METH_FASTCALL | METH_KEYWORDS, f->doc.c_str()};
  py::str module_name(module);
  f->function = PyCFunction_NewEx(&f->def, nullptr, module_name.ptr());
  if (f->function == nullptr) throw py::error_already_set();
  slots[used++] = f.release();
  return py::reinterpret_borrow<py::object>(slots[used - 1]->function);
}

}  // namespace

void add_operator_functions(py::module_& m, RunFunction run) {
  run_function = run;
  for (Keyword& k : keywords) k.interned = PyUnicode_InternFromString(k.name);  // never released
  defaults.fill(Py_None);
  defaults[kRunBackend] = PyUnicode_InternFromString("auto");
  defaults[kRunTiming] = Py_False;
  defaults[kRunRepeat] = PyLong_FromLong(1);
  defaults[kRunWarmup] = PyLong_FromLong(0);
  m.def("operator_function", &operator_function);
}

}  // namespace dmlbits::python
