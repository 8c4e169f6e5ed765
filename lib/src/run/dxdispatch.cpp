#include "dxdispatch.hpp"
#include "operation_access.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "evaluate.hpp"
#include "io.hpp"
#include "operand.hpp"
#include "files.hpp"

// What the model follows (microsoft/DirectML at a9614e82, July 2025): DxDispatch/doc/Guide.md,
// and where the Guide and DxDispatch/models/_schema.json (last changed in 17c28291) disagree, the
// parser DxDispatch/src/model/JsonParsers.cpp, which is what runs. The schema predates the .npy
// initialiser and the writeFile command that the Guide documents and the parser accepts.

namespace dmlbits {
namespace {

constexpr std::uint64_t kUintMax = std::numeric_limits<std::uint32_t>::max();

std::uint64_t round_up_4(std::uint64_t n) { return (n + 3) & ~std::uint64_t{3}; }

// DirectML declares Sizes and Strides as 32-bit UINTs, and DxDispatch reads them, valueCount and
// writeFile's dimensions as such; a larger value has no faithful model.
void require_uint32(std::uint64_t value, const char* what) {
  if (value > kUintMax)
    throw Error(Errc::unsupported,
                fmt::format("DxDispatch model: {} {} does not fit DirectML's 32-bit UINT", what, value));
}

nlohmann::json tensor_desc_json(const DmlTensorDesc& d) {
  for (auto s : d.sizes) require_uint32(s, "size");
  for (auto s : d.strides) require_uint32(s, "stride");
  // The form `--explain` prints: every field of DML_BUFFER_TENSOR_DESC spelled out, so that
  // nothing is left to DxDispatch's defaults (it would otherwise compute a packed size).
  return to_json(d);
}

// A buffer must hold its initial data, and DirectML requires a bound buffer to be at least the
// TotalTensorSizeInBytes of its tensor and a multiple of 4 bytes. DxDispatch
// rounds up to 4 only when sizeInBytes is absent, so an explicit size is rounded here.
std::uint64_t buffer_size(std::uint64_t data_bytes, std::uint64_t tensor_bytes) {
  return round_up_4(std::max(data_bytes, tensor_bytes));
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string dxdispatch_level_argument(FeatureLevel level) {
  // DxDispatch's --dml_feature_level takes "major.minor" (it parses a float).
  return fmt::format("{}.{}", level.major(), level.minor());
}

// The command that writes `resource` to `path` as an .npy of `shape`. DxDispatch writes an .npy of
// a 0-d tensor as 1-d when given no dimensions (all of the padded buffer); [1] at least keeps the
// element count.
nlohmann::json write_file_command(const std::string& resource, const std::string& path, const Shape& shape) {
  nlohmann::json dimensions = nlohmann::json::array();
  for (auto d : shape.dims()) dimensions.push_back(d);
  if (dimensions.empty()) dimensions.push_back(1);
  return {{"type", "writeFile"}, {"resource", resource}, {"targetPath", path}, {"dimensions", dimensions}};
}

// The note's "output": what a person comparing the result needs to know of it.
nlohmann::json output_note(const std::string& path, DType dtype, const Shape& shape) {
  return {{"path", path},
          {"dtype", dtype_info(dtype).numpy_name},
          {"shape", std::vector<std::uint64_t>(shape.dims().begin(), shape.dims().end())}};
}

// The model: DxDispatch reads its first three members; "dmlbits" is the note, not part of its format.
nlohmann::json model_of(nlohmann::json resources, nlohmann::json dispatchables, nlohmann::json commands,
                        nlohmann::json note) {
  nlohmann::json model = nlohmann::json::object();
  model["resources"] = std::move(resources);
  model["dispatchables"] = std::move(dispatchables);
  model["commands"] = std::move(commands);
  model["dmlbits"] = std::move(note);
  return model;
}

}  // namespace

DxDispatchFiles dxdispatch_file_names(const std::string& file, const std::vector<std::string>& input_names) {
  if (file.empty() || file == "-") throw OptionError(OptionKey::emit_dxdispatch, OptionRule::no_file_name, file);
  std::string base = file;
  if (base.size() >= 5) {
    if (lower(base.substr(base.size() - 5)) == ".json") base.resize(base.size() - 5);
  }
  if (path_from_utf8(base).filename().empty())
    throw OptionError(OptionKey::emit_dxdispatch, OptionRule::no_file_name, file, "named");
  for (std::size_t i = 0; i < input_names.size(); ++i) {
    if (lower(input_names[i]) == "out")
      throw Error(Errc::usage, fmt::format("--emit-dxdispatch: the operand '{}' would be written to {}-out.npy, the "
                                           "name of DxDispatch's output; rename it",
                                           input_names[i], base));
    for (std::size_t j = 0; j < i; ++j)
      if (lower(input_names[j]) == lower(input_names[i]))
        throw Error(Errc::usage, fmt::format("--emit-dxdispatch: the operands '{}' and '{}' would be one file on "
                                             "Windows, where DxDispatch runs ({}-{}.npy); rename one",
                                             input_names[j], input_names[i], base, input_names[i]));
  }
  DxDispatchFiles names;
  names.model = base + ".json";
  for (const std::string& name : input_names) names.inputs.push_back(base + "-" + name + ".npy");
  names.output = base + "-out.npy";
  return names;
}

DxDispatchFiles dxdispatch_file_names(const std::string& file, int arity) {
  return dxdispatch_file_names(file, arity == 2 ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{"a"});
}

nlohmann::json dxdispatch_model(const ValidatedOp& op, const std::vector<std::string>& input_npy_names,
                                const std::string& output_npy_name) {
  const OpInfo& info = op.op();
  const DmlOperatorDesc& desc = op.desc();
  if (input_npy_names.size() != desc.inputs.size())
    throw Error(Errc::internal, fmt::format("DxDispatch model of {}: {} input files for {} inputs", info.verb,
                                            input_npy_names.size(), desc.inputs.size()));
  if (desc.empty)
    throw Error(Errc::unsupported,
                fmt::format("DxDispatch model of {}: the result {} has no elements, and DirectML cannot dispatch a "
                            "tensor with a zero size",
                            info.verb, op.output_shape().to_string()));
  require_uint32(desc.output.element_count(), "element count");

  static const char* const kInputResources[] = {"A", "B"};
  const auto fields = info.input_field_names();
  nlohmann::json resources = nlohmann::json::object();
  nlohmann::json tensors = nlohmann::json::object();
  nlohmann::json bindings = nlohmann::json::object();
  for (std::size_t i = 0; i < desc.inputs.size(); ++i) {
    const DmlTensorDesc& t = desc.inputs[i];
    const std::uint64_t data_bytes = op.input_shapes()[i].byte_size(dtype_info(t.dtype).size);
    std::uint64_t size = buffer_size(data_bytes, t.total_bytes);
    // In place, input A's buffer also receives the output.
    if (i == 0 && op.in_place()) size = buffer_size(size, desc.output.total_bytes);
    resources[kInputResources[i]] = {
        // Redundant with the .npy's descr, but DxDispatch checks that they agree, and the
        // schema requires it.
        {"initialValuesDataType", dtype_info(t.dtype).dml_enum_name()},
        {"initialValues", {{"sourcePath", input_npy_names[i]}}},
        {"sizeInBytes", size},
    };
    tensors[std::string(fields[i])] = tensor_desc_json(t);
    bindings[std::string(fields[i])] = kInputResources[i];
  }

  const DmlTensorDesc& out = desc.output;
  std::string out_resource = "Out";
  if (op.in_place()) {
    out_resource = kInputResources[0];  // DirectML allows the output to alias input A
  } else {
    resources[out_resource] = {
        {"initialValuesDataType", dtype_info(out.dtype).dml_enum_name()},
        {"initialValues", {{"valueCount", out.element_count()}, {"value", 0}}},
        {"sizeInBytes", buffer_size(out.element_count() * dtype_info(out.dtype).size, out.total_bytes)},
    };
  }
  tensors["OutputTensor"] = tensor_desc_json(out);
  bindings["OutputTensor"] = out_resource;

  const std::string dispatchable(info.verb);
  nlohmann::json dispatchables = {
      {dispatchable,
       {
           {"type", info.dml_operator_name()},
           {"desc", tensors},
           {"executionFlags", {"DML_EXECUTION_FLAG_NONE"}},
       }},
  };

  nlohmann::json commands = nlohmann::json::array();
  commands.push_back({{"type", "dispatch"}, {"dispatchable", dispatchable}, {"bindings", bindings}});
  commands.push_back(write_file_command(out_resource, output_npy_name, op.output_shape()));

  // Not part of DxDispatch's format (it reads only the three members above): what a person
  // comparing the result needs to know.
  nlohmann::json note = {
      {"version", DMLBITS_VERSION},
      {"verb", info.verb},
      {"feature_level", op.level().enum_name()},
      {"dxdispatch_arguments", {"--dml_feature_level", dxdispatch_level_argument(op.level())}},
      {"output", output_note(output_npy_name, out.dtype, op.output_shape())},
  };
  if (info.shift) note["shift_overflow"] = shift_overflow_name(op.shift_overflow());
  return model_of(std::move(resources), std::move(dispatchables), std::move(commands), std::move(note));
}

namespace {

// A resource's name for a node's operand. Names of operands are identifiers, so that the ':' of
// the others keeps them apart.
std::string resource_name(const ValidatedGraph& g, const GraphValue& v) {
  switch (v.kind) {
    case GraphValue::Kind::input:
      return g.expression().names[v.index];
    case GraphValue::Kind::constant:
      return fmt::format("const:{}", v.index);
    case GraphValue::Kind::node:
      break;
  }
  return fmt::format("node:{}", v.index);
}

// A constant's elements as DxDispatch's array initialiser takes them, with its data type: an
// integer type's values as they are; a float's bits as the unsigned type of its width (the
// buffer is untyped, and JSON numbers lose NaN payloads).
std::pair<DType, nlohmann::json> constant_values(const TensorView& t) {
  const DTypeInfo& info = dtype_info(t.dtype);
  DType as = t.dtype;
  if (info.kind == DTypeKind::floating)
    as = info.size == 2 ? DType::uint16 : info.size == 4 ? DType::uint32 : DType::uint64;
  nlohmann::json values = nlohmann::json::array();
  for (std::uint64_t i = 0; i < t.element_count(); ++i) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, t.data + i * info.size, info.size);  // little-endian hosts only (io.hpp)
    if (info.kind == DTypeKind::signed_int) {
      const unsigned shift = 64 - info.bits();
      values.push_back(static_cast<std::int64_t>(bits << shift) >> shift);
    } else {
      values.push_back(bits);
    }
  }
  return {as, values};
}

}  // namespace

nlohmann::json dxdispatch_graph_model(const ValidatedGraph& g, const std::vector<std::string>& input_npy_names,
                                      const std::vector<TensorView>& constants, const std::string& output_npy_name) {
  const expr::Expression& e = g.expression();
  if (input_npy_names.size() != g.inputs().size() || constants.size() != g.constants().size())
    throw Error(Errc::internal,
                fmt::format("DxDispatch model of '{}': {} input files and {} constants for {} and {}", e.text,
                            input_npy_names.size(), constants.size(), g.inputs().size(), g.constants().size()));
  if (g.output_shape().element_count() == 0)
    throw Error(Errc::unsupported,
                fmt::format("DxDispatch model of '{}': the result {} has no elements, and DirectML cannot dispatch a "
                            "tensor with a zero size",
                            e.text, g.output_shape().to_string()));

  // The bytes of the tensors bound to each resource: its buffer must hold the largest.
  std::map<std::string, std::uint64_t> bound;
  for (std::size_t k = 0; k < g.nodes().size(); ++k) {
    const GraphNode& n = g.nodes()[k];
    for (int i = 0; i < n.op.op().arity; ++i) {
      auto& b = bound[resource_name(g, n.args[static_cast<std::size_t>(i)])];
      b = std::max(b, n.op.desc().inputs[static_cast<std::size_t>(i)].total_bytes);
    }
    auto& b = bound[resource_name(g, {GraphValue::Kind::node, static_cast<std::uint32_t>(k)})];
    b = std::max(b, n.op.desc().output.total_bytes);
  }

  nlohmann::json resources = nlohmann::json::object();
  for (std::size_t i = 0; i < g.inputs().size(); ++i) {
    const OperandInfo& in = g.inputs()[i];
    const std::string name = e.names[i];
    resources[name] = {
        {"initialValuesDataType", dtype_info(in.dtype).dml_enum_name()},
        {"initialValues", {{"sourcePath", input_npy_names[i]}}},
        {"sizeInBytes", buffer_size(in.shape.byte_size(dtype_info(in.dtype).size), bound[name])},
    };
  }
  for (std::size_t i = 0; i < g.constants().size(); ++i) {
    const GraphConstant& c = g.constants()[i];
    const TensorView& t = constants[i];
    if (t.dtype != c.dtype || !(t.shape == c.shape))
      throw Error(Errc::internal, fmt::format("DxDispatch model: constant {} is not the one validated", i));
    const std::string name = resource_name(g, {GraphValue::Kind::constant, static_cast<std::uint32_t>(i)});
    auto [as, values] = constant_values(t);
    resources[name] = {
        {"initialValuesDataType", dtype_info(as).dml_enum_name()},
        {"initialValues", values},
        {"sizeInBytes", buffer_size(t.byte_size(), bound[name])},
    };
  }

  nlohmann::json dispatchables = nlohmann::json::object();
  nlohmann::json commands = nlohmann::json::array();
  nlohmann::json node_notes = nlohmann::json::array();
  std::optional<ShiftOverflow> shift_overflow;
  for (std::size_t k = 0; k < g.nodes().size(); ++k) {
    const GraphNode& n = g.nodes()[k];
    const OpInfo& info = n.op.op();
    const DmlOperatorDesc& desc = n.op.desc();
    if (info.shift) shift_overflow = n.op.shift_overflow();
    const std::string name = resource_name(g, {GraphValue::Kind::node, static_cast<std::uint32_t>(k)});
    require_uint32(desc.output.element_count(), "element count");
    resources[name] = {
        {"initialValuesDataType", dtype_info(desc.output.dtype).dml_enum_name()},
        {"initialValues", {{"valueCount", desc.output.element_count()}, {"value", 0}}},
        {"sizeInBytes", buffer_size(desc.output.element_count() * dtype_info(desc.output.dtype).size, bound[name])},
    };
    const auto fields = info.input_field_names();
    nlohmann::json tensors = nlohmann::json::object();
    nlohmann::json bindings = nlohmann::json::object();
    for (std::size_t i = 0; i < desc.inputs.size(); ++i) {
      tensors[std::string(fields[i])] = tensor_desc_json(desc.inputs[i]);
      bindings[std::string(fields[i])] = resource_name(g, n.args[i]);
    }
    tensors["OutputTensor"] = tensor_desc_json(desc.output);
    bindings["OutputTensor"] = name;
    dispatchables[name] = {
        {"type", info.dml_operator_name()},
        {"desc", tensors},
        {"executionFlags", {"DML_EXECUTION_FLAG_NONE"}},
    };
    commands.push_back({{"type", "dispatch"}, {"dispatchable", name}, {"bindings", bindings}});
    node_notes.push_back(
        {{"dispatchable", name}, {"text", std::string(e.node_text(n.expr_node))}, {"column", e.column(n.expr_node)}});
  }

  const std::string out_resource =
      resource_name(g, {GraphValue::Kind::node, static_cast<std::uint32_t>(g.nodes().size() - 1)});
  commands.push_back(write_file_command(out_resource, output_npy_name, g.output_shape()));

  nlohmann::json inputs = nlohmann::json::object();
  for (std::size_t i = 0; i < g.inputs().size(); ++i) inputs[e.names[i]] = input_npy_names[i];
  nlohmann::json note = {
      {"version", DMLBITS_VERSION},
      {"expression", e.text},
      {"execution", "node by node: DxDispatch has no model of a DML_GRAPH_DESC"},
      {"nodes", node_notes},
      {"inputs", inputs},
      {"feature_level", g.level().enum_name()},
      {"dxdispatch_arguments", {"--dml_feature_level", dxdispatch_level_argument(g.level())}},
      {"output", output_note(output_npy_name, g.output_dtype(), g.output_shape())},
  };
  if (shift_overflow) note["shift_overflow"] = shift_overflow_name(*shift_overflow);
  return model_of(std::move(resources), std::move(dispatchables), std::move(commands), std::move(note));
}

namespace {

DxDispatchFiles prepare_files(PendingOutputs& into, const std::string& file, const ValidatedOp& op,
                              const std::vector<TensorView>& as_read, const std::string& reread_a) {
  std::vector<TensorView> inputs = as_read;
  std::vector<LoadedOperand> original_a;
  if (!reread_a.empty() && !inputs.empty()) {
    original_a = load_operands(std::vector<std::string>{reread_a}, op.input_dtype());
    inputs[0] = original_a[0].view();
  }
  const DxDispatchFiles names = dxdispatch_file_names(file, op.op().arity);
  if (inputs.size() != names.inputs.size())
    throw Error(Errc::internal,
                fmt::format("DxDispatch model: {} input tensors for {} inputs", inputs.size(), names.inputs.size()));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype != op.desc().inputs[i].dtype || !(inputs[i].shape == op.input_shapes()[i]))
      throw Error(Errc::internal,
                  fmt::format("DxDispatch model: input {} is not the tensor the operation was validated for", i));
  const auto leaf = [](const std::string& path) { return path_to_utf8(path_from_utf8(path).filename()); };
  std::vector<std::string> leaves;
  for (const auto& in : names.inputs) leaves.push_back(leaf(in));
  // Built first so that an operation DxDispatch cannot run leaves no files behind.
  const nlohmann::json model = dxdispatch_model(op, leaves, leaf(names.output));
  // All or nothing: every file is prepared complete before any takes its name, so that a
  // failure (a full disk) or a kill while writing leaves none of them. Then the model last:
  // once it exists, so do the inputs it names.
  for (std::size_t i = 0; i < inputs.size(); ++i) into.add_tensor(inputs[i], names.inputs[i], TensorFormat::npy);
  into.add_text(names.model, model.dump(2) + "\n");
  return names;
}

// An expression's files: the model refers to its inputs by name, and reads its literals inline,
// read again from the expression's text as the run read them.
DxDispatchFiles prepare_graph_files(PendingOutputs& into, const std::string& file, const ValidatedGraph& g,
                                    const std::vector<TensorView>& inputs) {
  const expr::Expression& e = g.expression();
  const DxDispatchFiles names = dxdispatch_file_names(file, e.names);
  if (inputs.size() != g.inputs().size())
    throw Error(Errc::internal,
                fmt::format("DxDispatch model: {} input tensors for {} inputs", inputs.size(), g.inputs().size()));
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].dtype != g.inputs()[i].dtype || !(inputs[i].shape == g.inputs()[i].shape))
      throw Error(
          Errc::internal,
          fmt::format("DxDispatch model: operand '{}' is not the tensor the graph was validated for", e.names[i]));
  std::vector<Tensor> constants;
  std::vector<TensorView> constant_views;
  for (const GraphConstant& c : g.constants())
    constants.push_back(read_expression_literal(e.nodes[static_cast<std::size_t>(c.expr_node)].literal, c.dtype));
  for (const Tensor& c : constants) constant_views.push_back(c.view());
  const auto leaf = [](const std::string& path) { return path_to_utf8(path_from_utf8(path).filename()); };
  std::vector<std::string> leaves;
  for (const auto& in : names.inputs) leaves.push_back(leaf(in));
  const nlohmann::json model = dxdispatch_graph_model(g, leaves, constant_views, leaf(names.output));
  for (std::size_t i = 0; i < inputs.size(); ++i) into.add_tensor(inputs[i], names.inputs[i], TensorFormat::npy);
  into.add_text(names.model, model.dump(2) + "\n");
  return names;
}

}  // namespace

DxDispatchFiles prepare_dxdispatch_model(PendingOutputs& into, const std::string& file, const Operation& op,
                                         const std::vector<TensorView>& as_read, const std::string& reread_a) {
  if (const ValidatedGraph* graph = OperationAccess::graph(op)) return prepare_graph_files(into, file, *graph, as_read);
  return prepare_files(into, file, validated(op), as_read, reread_a);
}

DxDispatchFiles write_dxdispatch_model(const std::string& file, const ValidatedOp& op,
                                       const std::vector<TensorView>& inputs, const std::string& reread_a) {
  PendingOutputs files;
  const DxDispatchFiles names = prepare_files(files, file, op, inputs, reread_a);
  files.commit();
  return names;
}

}  // namespace dmlbits
