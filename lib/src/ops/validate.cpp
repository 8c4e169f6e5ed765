#include "validate.hpp"

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

[[noreturn]] void refuse(const OpInfo& op, std::string msg) {
  throw Error(Errc::invalid_input, fmt::format("{}: {}", op.verb, msg));
}

DType effective_out_dtype(const OpInfo& op, DType in, const std::optional<DType>& requested) {
  return requested.value_or(op.default_output_dtype(in));
}

bool tier_accepts(const OpTier& t, DType in, DType out, std::size_t dims) {
  const bool out_ok = t.outputs.empty() ? out == in : t.outputs.contains(out);
  return t.inputs.contains(in) && out_ok && t.dims.contains(dims);
}

// The oldest level at which the whole operation is accepted.
std::optional<FeatureLevel> lowest_accepting(const OpInfo& op, DType in, DType out, std::size_t dims) {
  for (FeatureLevel level : feature_levels()) {
    const OpTier* t = op.tier_at(level);
    if (t && tier_accepts(*t, in, out, dims)) return level;
  }
  return std::nullopt;
}

std::string needs(const std::optional<FeatureLevel>& lowest, FeatureLevel requested) {
  return fmt::format("needs {} or later (requested {})", lowest->enum_name(), requested.short_name());
}

}  // namespace

ValidatedOp validate(const OpRequest& r) {
  const OpInfo& op = op_info(r.op);
  if (static_cast<int>(r.inputs.size()) != op.arity)
    throw Error(Errc::internal, fmt::format("{}: {} inputs given, {} expected", op.verb, r.inputs.size(), op.arity));

  const DType in = r.inputs[0].dtype;
  if (op.arity == 2 && r.inputs[1].dtype != in)
    refuse(op, fmt::format("the inputs have different data types ({} and {}); DirectML requires one type",
                           dtype_info(in).dml_name, dtype_info(r.inputs[1].dtype).dml_name));

  Shape out_shape = r.inputs[0].shape;
  if (op.arity == 2) {
    auto b = broadcast_shapes(r.inputs[0].shape, r.inputs[1].shape);
    if (!b)
      refuse(op, fmt::format("shapes {} and {} cannot be broadcast together", r.inputs[0].shape.to_string(),
                             r.inputs[1].shape.to_string()));
    out_shape = *b;
  }
  const std::size_t dims = std::max<std::size_t>(out_shape.rank(), 1);

  const DType out = effective_out_dtype(op, in, r.out_dtype);
  if (op.output_dtype_is_input_dtype() && out != in)
    refuse(op, fmt::format("output data type {} differs from the input data type {} (only popcount "
                           "chooses its output type)",
                           dtype_info(out).dml_name, dtype_info(in).dml_name));

  // The operation as DirectML would be given it; what follows judges it against the tables.
  ValidatedOp v;
  v.desc_.op = r.op;
  v.desc_.level = r.level;
  v.desc_.shift_overflow = r.shift_overflow;
  for (const auto& input : r.inputs) {
    v.desc_.inputs.push_back(make_tensor_desc(in, input.shape, out_shape));
    v.input_shapes_.push_back(input.shape);
  }
  v.desc_.output = make_tensor_desc(out, out_shape, out_shape);
  v.desc_.empty = out_shape.element_count() == 0;
  v.output_shape_ = out_shape;
  v.in_place_ = r.in_place;

  // The lowest level accepting the whole operation is what every refusal below points to.
  const auto lowest = lowest_accepting(op, in, out, dims);
  bool dtype_ever = false;
  for (const auto& t : op.tiers) dtype_ever = dtype_ever || t.inputs.contains(in);
  if (!dtype_ever)
    refuse(op, fmt::format("data type {} is not supported at any feature level (supported: {})",
                           dtype_info(in).dml_name, op.tiers.back().inputs.to_string()));

  bool out_ever = op.output_dtype_is_input_dtype();
  for (const auto& t : op.tiers) out_ever = out_ever || t.outputs.contains(out);
  if (!out_ever)
    refuse(op, fmt::format("output data type {} is not supported (supported: {})", dtype_info(out).dml_name,
                           op.tiers.back().outputs.to_string()));

  const OpTier* tier = op.tier_at(r.level);
  if (tier == nullptr) {
    if (!lowest) refuse(op, fmt::format("this operation is not supported at any feature level"));
    // The operator is not there yet; when the operation needs a later level than the
    // operator's first, the requirement that sets that level is what to name (shl on UINT64
    // at 1_0: the data type needs 4_1, the operator only 2_1).
    const OpTier& first = op.tiers.front();
    if (*lowest != first.level) {
      if (!first.inputs.contains(in))
        refuse(op, fmt::format("data type {} {}", dtype_info(in).dml_name, needs(lowest, r.level)));
      if (!first.outputs.empty() && !first.outputs.contains(out))
        refuse(op, fmt::format("output data type {} {}", dtype_info(out).dml_name, needs(lowest, r.level)));
      if (!first.dims.contains(dims)) {
        std::string need = needs(lowest, r.level);
        if (dims != 1) need.erase(4, 1);
        refuse(op, fmt::format("{} dimension{} {}", dims, dims == 1 ? "" : "s", need));
      }
    }
    refuse(op, fmt::format("the operator ({}) {}", op.dml_operator_name(), needs(lowest, r.level)));
  }

  // Each requirement in turn; the message names the first one the requested level fails.
  if (!tier->inputs.contains(in)) {
    refuse(op, fmt::format("data type {} {}", dtype_info(in).dml_name, needs(lowest, r.level)));
  }
  if (!tier->outputs.empty() && !tier->outputs.contains(out))
    refuse(op, fmt::format("output data type {} {}", dtype_info(out).dml_name, needs(lowest, r.level)));
  if (!tier->dims.contains(dims)) {
    const std::string what = fmt::format("{} dimension{}", dims, dims == 1 ? "" : "s");
    if (!lowest) refuse(op, fmt::format("{} {} not supported at any feature level", what, dims == 1 ? "is" : "are"));
    // "3 dimensions need", "1 dimension needs": the verb agrees with the count.
    std::string need = needs(lowest, r.level);
    if (dims != 1) need.erase(4, 1);
    refuse(op, fmt::format("{} {}{}", what, need,
                           tier->dims.min == tier->dims.max
                               ? fmt::format("; at {} it takes exactly {}", r.level.short_name(), tier->dims.min)
                               : std::string()));
  }

  if (r.in_place) {
    if (!op.allows_in_place())
      refuse(op, fmt::format("the output cannot overwrite the input ({}'s output may not alias its input)",
                             op.dml_operator_name()));
    if (!(r.inputs[0].shape == out_shape))
      refuse(op, fmt::format("the output cannot overwrite input A: A has shape {} but the result has shape {}",
                             r.inputs[0].shape.to_string(), out_shape.to_string()));
  }

  return v;
}

}  // namespace dmlbits

namespace dmlbits {

bool ValidatedOp::is_flat_streamable() const {
  for (const auto& s : input_shapes_)
    if (!(s == output_shape_) && s.element_count() != 1) return false;
  return true;
}

ValidatedOp ValidatedOp::flat_chunk(std::uint64_t count) const {
  if (!is_flat_streamable()) throw Error(Errc::internal, "flat_chunk of an operation that broadcasts along an axis");
  ValidatedOp v = *this;
  const Shape chunk{count};
  v.output_shape_ = chunk;
  for (std::size_t i = 0; i < input_shapes_.size(); ++i) {
    const bool scalar = !(input_shapes_[i] == output_shape_);
    v.input_shapes_[i] = scalar ? Shape{1} : chunk;
    v.desc_.inputs[i] = make_tensor_desc(desc_.inputs[i].dtype, v.input_shapes_[i], chunk);
  }
  v.desc_.output = make_tensor_desc(desc_.output.dtype, chunk, chunk);
  v.desc_.empty = count == 0;
  return v;
}

}  // namespace dmlbits
