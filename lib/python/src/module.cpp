// _dmlbits: the extension under the `dmlbits` package (lib/python/dmlbits). Python code calls
// it only through the package's plain functions, which give the names, keywords and
// docstrings; this file turns Python objects into the library's types and back, releases the
// GIL while an operation runs, and looks for Ctrl-C between its chunks.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "arrays.hpp"
#include "dmlbits/check.hpp"
#include "dmlbits/devices.hpp"
#include "dmlbits/error.hpp"
#include "engine.hpp"

namespace dmlbits::python {
namespace {

py::object from_json(const nlohmann::json& j) {
  // Never released: a static py::object would be destroyed after the interpreter.
  static py::handle loads = py::object(py::module_::import("json").attr("loads")).release();
  return loads(j.dump());
}

std::optional<DType> dtype_argument(const std::optional<std::string>& name, const char* keyword) {
  if (!name || name->empty()) return std::nullopt;
  auto d = parse_dtype_name(*name);
  if (!d) throw Error(Errc::usage, fmt::format("{}: unknown data type '{}' (known: {})", keyword, *name, dtype_names_help()));
  return d;
}

// The operands of a call: arrays used in place (or converted), literal text read as the CLI reads it.
struct Operands {
  std::vector<py::array> keep;        // arrays whose memory the views borrow
  std::vector<Tensor> literals;       // tensors read from literal text
  std::vector<TensorView> views;
  std::vector<OperandInfo> infos;
};

Operands take_operands(const std::vector<py::object>& objs, const std::optional<std::string>& dtype_name) {
  Operands o;
  const std::optional<DType> dtype = dtype_argument(dtype_name, "dtype");
  std::vector<std::string> texts;
  std::optional<DType> anchor;
  std::vector<std::optional<TensorView>> slots;
  bool any_literal = false;
  std::vector<std::size_t> zero_d;  // operands given as Python floats
  texts.reserve(objs.size());
  slots.reserve(objs.size());
  o.keep.reserve(objs.size());
  o.views.reserve(objs.size());
  o.infos.reserve(objs.size());
  for (std::size_t i = 0; i < objs.size(); ++i) {
    const py::object& obj = objs[i];
    // Python's own numbers are literals, as on the command line: they take the other operand's
    // dtype (or dtype=) and must fit it. A float, which the CLI writes as a one-element array
    // literal ('[1.5]', '["nan"]'), stays 0-d.
    std::string text;
    if (py::isinstance<py::str>(obj)) {
      text = obj.cast<std::string>();
      if (text.empty()) text = "''";  // refused as not a literal, not taken for an array
    } else if (PyBool_Check(obj.ptr())) {
      text = obj.ptr() == Py_True ? "1" : "0";
    } else if (PyLong_CheckExact(obj.ptr())) {
      text = py::str(obj).cast<std::string>();
    } else if (PyFloat_CheckExact(obj.ptr())) {
      const double x = obj.cast<double>();
      text = std::isnan(x) ? "[\"nan\"]" : std::isinf(x) ? (x > 0 ? "[\"inf\"]" : "[\"-inf\"]") : fmt::format("[{}]", x);
      zero_d.push_back(i);
    }
    if (!text.empty()) {
      texts.push_back(std::move(text));
      any_literal = true;
      slots.emplace_back();
      continue;
    }
    texts.emplace_back();
    ArrayOperand a = [&] {
      try {
        return array_operand(obj);
      } catch (const Error& e) {  // (the context is formatted only for an error: calls are small)
        rethrow_with_context(e, fmt::format("operand {}", static_cast<char>('A' + i)));
      }
    }();
    if (!anchor) anchor = a.view.dtype;
    slots.emplace_back(a.view);
    o.keep.push_back(std::move(a.array));
  }
  if (any_literal) o.literals = read_literals(texts, dtype, anchor);
  std::size_t next_literal = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    const auto& s = slots[i];
    if (!s && std::find(zero_d.begin(), zero_d.end(), i) != zero_d.end()) {
      Tensor& one = o.literals[next_literal];
      Tensor scalar(one.dtype(), Shape{});
      scalar.set_bits_at(0, one.bits_at(0));
      one = std::move(scalar);
    }
    const TensorView v = s ? *s : o.literals[next_literal++].view();
    o.views.push_back(v);
    o.infos.push_back({v.dtype, v.shape});
  }
  return o;
}

// Ctrl-C between chunks: Python's own handler has only set a flag, which the main thread
// turns into KeyboardInterrupt here (other threads see no signals: PyErr_CheckSignals is a
// no-op there, and the main thread handles the signal itself).
void check_signals() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

nlohmann::json timing_json(const ValidatedOp& v, const RunTiming& t, int warmup, const std::vector<double>& samples) {
  // The keys of the CLI's --time-json (app/report.cpp, timing_json).
  nlohmann::json phases = nlohmann::json::object();
  for (const auto& p : t.phases) phases[p.name + "_s"] = p.seconds;
  nlohmann::json backend_phases = nlohmann::json::object();
  for (const auto& p : t.backend_phases) backend_phases[p.name + "_s"] = p.seconds;
  const SampleStatsJson s = sample_stats_json(samples);
  return {{"op", v.op().verb},
          {"dtype", dtype_info(v.input_dtype()).numpy_name},
          {"shape", v.output_shape().dims()},
          {"feature_level", v.level().short_name()},
          {"backend", t.backend},
          {"device", t.device},
          {"selection", t.selection},
          {"phases", phases},
          {"backend_phases", backend_phases},
          {"total_s", t.total_seconds},
          {"execute_bytes", t.execute_bytes},
          {"execute_runs", t.execute_runs},
          {"execute_gbps", t.execute_gbps()},
          {"execute",
           {{"warmup", warmup},
            {"samples_s", samples},
            {"stats_s", nlohmann::json::parse(s.json)},
            {"gbps_at_median", s.median > 0 ? static_cast<double>(t.execute_bytes) / s.median / 1e9 : 0.0}}}};
}

py::object run_call(int op_index, py::object a, py::object b, py::object out, std::optional<std::string> dtype,
               const RunOptions& options, bool timing, int repeat, int warmup) {
  if (repeat < 1 || warmup < 0) throw Error(Errc::usage, "repeat must be at least 1 and warmup at least 0");
  const OpKind kind = op_table()[static_cast<std::size_t>(op_index)].kind;
  // The phases are timed for timing=True only: a 4x4 call should cost about a microsecond.
  Stopwatch total, phase;
  RunTiming t;
  auto lap = [&](const char* name) {
    if (timing) t.phases.push_back({name, phase.lap()});
  };
  std::vector<py::object> objs;
  objs.reserve(2);
  objs.push_back(std::move(a));
  if (!b.is_none()) objs.push_back(std::move(b));
  Operands in = take_operands(objs, dtype);
  lap("read");
  Backend& backend = backend_for(options, in.infos);
  lap("backend");

  // out=: exactly the result's dtype and shape, C-contiguous, native, writeable. Where it is
  // input A's own memory the operation runs in place (and is refused as DirectML refuses it for
  // popcount); where it overlaps an input otherwise, the result goes through a temporary.
  py::array result;  // (a default py::array is an empty array, not a null handle)
  const bool have_out = !out.is_none();
  bool in_place = false, through_temporary = false;
  if (have_out) {
    if (!py::isinstance<py::array>(out)) throw Error(Errc::usage, "out: expected a numpy.ndarray");
    result = py::reinterpret_borrow<py::array>(out);
    // Input A's memory, whole (a copy made for a layout never is).
    const TensorView& a0 = in.views[0];
    in_place = a0.data != nullptr && result.data() == static_cast<const void*>(a0.data) &&
               static_cast<std::size_t>(result.nbytes()) == a0.byte_size();
  }
  const ValidatedOp v = validate_call(kind, options, in.infos, in_place, backend);
  lap("validate");
  if (timing) {
    t.backend = std::string(backend.name());
    t.device = backend.device_description_for(v, false);  // as run_operation says it
    t.selection = backend.selection_reason();
  }

  const DType out_dtype = v.output_dtype();
  const Shape& out_shape = v.output_shape();
  if (!have_out) {
    result = new_array(out_dtype, out_shape);
  } else {
    const int flags = result.flags();
    std::vector<std::uint64_t> dims;
    for (py::ssize_t i = 0; i < result.ndim(); ++i) dims.push_back(static_cast<std::uint64_t>(result.shape(i)));
    const py::dtype rd = result.dtype();
    if (rd.kind() == 'b' || dtype_of(rd) != out_dtype || !is_native(rd))
      throw Error(Errc::usage, fmt::format("out: the result is {}, but out has dtype {}", dtype_info(out_dtype).numpy_name,
                                           py::str(rd.attr("str")).cast<std::string>()));
    if (dims.size() > kMaxRank || !(Shape(std::span<const std::uint64_t>(dims)) == out_shape))
      throw Error(Errc::usage, fmt::format("out: the result has shape {}, but out has shape ({})", out_shape.to_string(),
                                           fmt::format("{}", fmt::join(dims, ", ")) + (dims.size() == 1 ? "," : "")));
    if (!(flags & py::array::c_style)) throw Error(Errc::usage, "out: must be C-contiguous");
    if (!result.writeable()) throw Error(Errc::usage, "out: is read-only");
    if (!in_place)
      for (std::size_t i = 0; i < in.views.size(); ++i)
        if (overlaps(static_cast<const std::byte*>(result.data()), static_cast<std::size_t>(result.nbytes()),
                     in.views[i].data, in.views[i].byte_size()))
          through_temporary = true;
  }
  py::array target = through_temporary ? new_array(out_dtype, out_shape) : result;

  ExecuteBuffers buffers;
  for (const auto& view : in.views) buffers.inputs.push_back(view.bytes());
  buffers.output = {static_cast<std::byte*>(target.mutable_data()), static_cast<std::size_t>(target.nbytes())};
  lap("allocate");
  std::vector<double> samples;
  {
    py::gil_scoped_release release;
    // Ctrl-C is looked for between chunks and between runs, not within a small operation.
    for (int i = 0; i < warmup; ++i) {
      execute(backend, v, buffers, check_signals);
      check_signals();
    }
    if (warmup > 0) lap("warmup");
    if (!timing && repeat == 1) {
      execute(backend, v, buffers, check_signals);
    } else {
      for (int i = 0; i < repeat; ++i) {
        Stopwatch one;
        execute(backend, v, buffers, check_signals);
        samples.push_back(one.seconds());
        if (i + 1 < repeat) check_signals();
      }
    }
    lap("execute");
  }
  if (through_temporary) result[py::ellipsis()] = target;
  if (!timing) return result;
  t.execute_runs = repeat;
  t.backend_phases = backend.detail_phases();
  t.execute_bytes = static_cast<std::uint64_t>(target.nbytes());
  for (const auto& view : in.views) t.execute_bytes += view.byte_size();
  t.total_seconds = total.seconds();
  return py::make_tuple(result, from_json(timing_json(v, t, warmup, samples)));
}

py::object explain(int op_index, py::object a, py::object b, std::optional<std::string> dtype, const RunOptions& options) {
  std::vector<py::object> objs{std::move(a)};
  if (!b.is_none()) objs.push_back(std::move(b));
  Operands in = take_operands(objs, dtype);
  Backend& backend = backend_for(options, in.infos);
  return from_json(nlohmann::json::parse(
      explain_json_text(validate_call(op_table()[static_cast<std::size_t>(op_index)].kind, options, in.infos, false, backend))));
}

// The support table, with the keys of `dmlbits ops --json` (app/report.cpp, ops_json).
py::object ops(const std::string& level_name) {
  std::optional<FeatureLevel> level;
  if (!level_name.empty()) {
    level = parse_feature_level(level_name);
    if (!level) throw Error(Errc::usage, fmt::format("feature_level: unknown level '{}'", level_name));
  }
  auto dtype_list = [](DTypeSet set) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& row : dtype_table())
      if (set.contains(row.dtype)) out.push_back(row.dml_name);
    return out;
  };
  auto tier_json = [&](const OpTier& t) {
    return nlohmann::json{{"from", t.level.short_name()},
                          {"dimensions", {t.dims.min, t.dims.max}},
                          {"input_types", dtype_list(t.inputs)},
                          {"output_types", t.outputs.empty() ? dtype_list(t.inputs) : dtype_list(t.outputs)},
                          {"output_is_input_type", t.outputs.empty()}};
  };
  nlohmann::json list = nlohmann::json::array();
  for (const auto& op : op_table()) {
    nlohmann::json j = {{"verb", op.verb},
                        {"dml_operator", op.dml_operator_name()},
                        {"dml_operator_value", op.dml_enum},
                        {"desc", op.dml_desc_name()},
                        {"aliases", op.aliases()},
                        {"arity", op.arity},
                        {"introduced", op.introduced().short_name()}};
    if (level) {
      const OpTier* t = op.tier_at(*level);
      j["available"] = t != nullptr;
      if (t) j["support"] = tier_json(*t);
    } else {
      nlohmann::json tiers = nlohmann::json::array();
      for (const auto& t : op.tiers) tiers.push_back(tier_json(t));
      j["tiers"] = tiers;
    }
    list.push_back(j);
  }
  nlohmann::json levels = nlohmann::json::array();
  for (auto l : feature_levels()) levels.push_back(l.short_name());
  nlohmann::json result = {{"feature_levels", levels}, {"ops", list}};
  if (level) result["feature_level"] = level->short_name();
  return from_json(result);
}

py::array read_tensor_file(const std::string& path, std::optional<std::string> dtype) {
  const std::optional<DType> default_dtype = dtype_argument(dtype, "dtype");
  Tensor t = [&] {
    py::gil_scoped_release release;
    return read_tensor_path(path, default_dtype);
  }();
  return tensor_array(std::move(t));
}

void write_tensor_file(py::object array, const std::string& path, const std::string& format_name, bool hex) {
  ArrayOperand a = array_operand(array);
  py::gil_scoped_release release;
  write_tensor_path(a.view, path, format_name, hex);
}

// (equal, the --expect report) for two arrays compared bit for bit.
py::tuple compare(py::object actual, py::object expected, std::size_t max_listed, const std::string& label) {
  ArrayOperand a = array_operand(actual), e = array_operand(expected);
  const std::optional<std::string> report = compare_bits(a.view, e.view, max_listed, label);
  return py::make_tuple(!report, report.value_or(std::string()));
}

py::list check(const std::string& manifest, const CheckOptions& options) {
  CheckSummary summary = [&] {
    py::gil_scoped_release release;
    return run_check(manifest, options);
  }();
  py::list cases;
  for (const auto& c : summary.cases) {
    const char* outcome = c.outcome == CaseResult::Outcome::pass ? "pass" : c.outcome == CaseResult::Outcome::fail ? "fail" : "error";
    cases.append(py::make_tuple(c.name, outcome, c.detail, c.report, c.seconds, c.updated, c.golden));
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
    for (const auto& e : errc_table()) rows.append(py::make_tuple(std::string(e.name), e.exit_status, std::string(e.description)));
    return rows;
  });
  m.def("op_names", [] {
    py::list names;
    for (const auto& op : op_table()) names.append(std::string(op.verb));
    return names;
  });
  m.def("version", [] { return std::string(DMLBITS_VERSION); });

  py::class_<RunOptions>(m, "RunOptions")
      .def_property_readonly("backend", [](const RunOptions& o) { return std::string(backend_name(o.backend)); })
      .def_property_readonly("feature_level", [](const RunOptions& o) { return o.level.short_name(); });
  m.def("run_options", [](const std::string& backend, const std::string& feature_level, const std::string& shift_overflow,
                          const std::string& out_dtype, unsigned threads, const std::string& isa, const std::string& adapter) {
    return make_run_options(backend, feature_level, shift_overflow, out_dtype, threads, isa, adapter);
  });
  m.def("run", &run_call);
  m.def("explain", &explain);
  m.def("ops", &ops);
  m.def("devices", [] {
    DevicesReport r = [] {
      py::gil_scoped_release release;
      return describe_devices();
    }();
    return from_json(r.json);
  });
  m.def("read_tensor", &read_tensor_file);
  m.def("write_tensor", &write_tensor_file);
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
            const auto kind = parse_backend(name);
            if (!kind) throw Error(Errc::usage, fmt::format("unknown backend '{}' (available: {})", name, backend_names_help()));
            o.backend = *kind;
          })
      .def_readwrite("isa", &CheckOptions::isa)
      .def_readwrite("adapter", &CheckOptions::adapter)
      .def_readwrite("filter", &CheckOptions::filter)
      .def_readwrite("update", &CheckOptions::update)
      .def_readwrite("jobs", &CheckOptions::jobs)
      .def_readwrite("max_listed", &CheckOptions::max_listed);
  m.def("check", &check);
}
