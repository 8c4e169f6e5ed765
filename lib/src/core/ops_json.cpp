// `dmlbits ops --json` and the Python module's ops(): the operator and dtype tables as JSON, the
// one writer of that document.
#include <nlohmann/json.hpp>

#include "dmlbits/ops.hpp"

namespace dmlbits {
namespace {

nlohmann::json dtype_list(DTypeSet s) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& row : dtype_table())
    if (s.contains(row.dtype)) out.push_back(row.dml_name);
  return out;
}

nlohmann::json tier_json(const OpTier& t) {
  return {{"from", t.level.short_name()},
          {"dimensions", {t.dims.min, t.dims.max}},
          {"input_types", dtype_list(t.inputs)},
          {"output_types", t.outputs.empty() ? dtype_list(t.inputs) : dtype_list(t.outputs)},
          {"output_is_input_type", t.outputs.empty()}};
}

nlohmann::json op_json(const OpInfo& op, std::optional<FeatureLevel> level) {
  nlohmann::json j = {{"verb", op.verb},
                      {"dml_operator", op.dml_operator_name()},
                      {"dml_operator_value", op.dml_enum},
                      {"desc", op.dml_desc_name()},
                      {"aliases", op.aliases()},
                      {"arity", op.arity},
                      {"introduced", op.introduced().short_name()},
                      {"shift", op.shift},
                      {"in_place", op.allows_in_place()},
                      {"gpu", op.shader != ShaderFamily::none},
                      {"summary", op.summary},
                      {"symbol", op.symbol},
                      {"python_name", op.python_name},
                      {"python_alias", op.python_alias},
                      {"python_notes", op.python_notes}};
  // null: the input's type. Otherwise the same whatever the input (the first output type).
  j["default_output_type"] = op.output_dtype_is_input_dtype()
                                 ? nlohmann::json(nullptr)
                                 : nlohmann::json(dtype_info(op.default_output_dtype(DType::uint8)).dml_name);
  if (level) {
    const OpTier* t = op.tier_at(*level);
    j["available"] = t != nullptr;
    if (t) j["support"] = tier_json(*t);
  } else {
    nlohmann::json tiers = nlohmann::json::array();
    for (const auto& t : op.tiers) tiers.push_back(tier_json(t));
    j["tiers"] = tiers;
  }
  return j;
}

}  // namespace

std::string ops_json_text(std::optional<FeatureLevel> level) {
  nlohmann::json ops = nlohmann::json::array();
  for (const auto& op : op_table()) ops.push_back(op_json(op, level));
  nlohmann::json levels = nlohmann::json::array();
  for (auto l : feature_levels()) levels.push_back(l.short_name());
  nlohmann::json dtypes = nlohmann::json::array();
  for (const auto& row : dtype_table())
    dtypes.push_back({{"name", row.dml_name}, {"numpy", row.numpy_name}, {"bits", row.bits()}});
  nlohmann::json modes = nlohmann::json::array();
  for (ShiftOverflow m : shift_overflow_modes()) modes.push_back(shift_overflow_name(m));
  nlohmann::json out = {{"feature_levels", levels}, {"dtypes", dtypes}, {"shift_overflow_modes", modes}, {"ops", ops}};
  if (level) out["feature_level"] = level->short_name();
  return out.dump(2);
}

}  // namespace dmlbits
