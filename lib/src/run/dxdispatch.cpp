#include "dxdispatch.hpp"
#include "operation_access.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
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

std::string dxdispatch_level_argument(FeatureLevel level) {
  // DxDispatch's --dml_feature_level takes "major.minor" (it parses a float).
  return fmt::format("{}.{}", level.major(), level.minor());
}

}  // namespace

DxDispatchFiles dxdispatch_file_names(const std::string& file, int arity) {
  if (file.empty() || file == "-") throw OptionError(OptionKey::emit_dxdispatch, OptionRule::no_file_name, file);
  std::string base = file;
  if (base.size() >= 5) {
    std::string ext = base.substr(base.size() - 5);
    std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
    if (ext == ".json") base.resize(base.size() - 5);
  }
  if (path_from_utf8(base).filename().empty())
    throw OptionError(OptionKey::emit_dxdispatch, OptionRule::no_file_name, file, "named");
  DxDispatchFiles names;
  names.model = base + ".json";
  names.inputs.push_back(base + "-a.npy");
  if (arity == 2) names.inputs.push_back(base + "-b.npy");
  names.output = base + "-out.npy";
  return names;
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

  // DxDispatch writes an .npy of a 0-d tensor as 1-d when given no dimensions (all of the
  // padded buffer); [1] at least keeps the element count.
  nlohmann::json dimensions = nlohmann::json::array();
  for (auto d : op.output_shape().dims()) dimensions.push_back(d);
  if (dimensions.empty()) dimensions.push_back(1);

  nlohmann::json commands = nlohmann::json::array();
  commands.push_back({{"type", "dispatch"}, {"dispatchable", dispatchable}, {"bindings", bindings}});
  commands.push_back(
      {{"type", "writeFile"}, {"resource", out_resource}, {"targetPath", output_npy_name}, {"dimensions", dimensions}});

  // Not part of DxDispatch's format (it reads only the three members above): what a person
  // comparing the result needs to know.
  nlohmann::json note = {
      {"version", DMLBITS_VERSION},
      {"verb", info.verb},
      {"feature_level", op.level().enum_name()},
      {"dxdispatch_arguments", {"--dml_feature_level", dxdispatch_level_argument(op.level())}},
      {"output",
       {{"path", output_npy_name},
        {"dtype", dtype_info(out.dtype).numpy_name},
        {"shape", std::vector<std::uint64_t>(op.output_shape().dims().begin(), op.output_shape().dims().end())}}},
  };
  if (info.shift) note["shift_overflow"] = shift_overflow_name(op.shift_overflow());

  nlohmann::json model = nlohmann::json::object();
  model["resources"] = resources;
  model["dispatchables"] = dispatchables;
  model["commands"] = commands;
  model["dmlbits"] = note;
  return model;
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

}  // namespace

DxDispatchFiles prepare_dxdispatch_model(PendingOutputs& into, const std::string& file, const Operation& op,
                                         const std::vector<TensorView>& as_read, const std::string& reread_a) {
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
