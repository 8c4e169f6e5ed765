// The only door to execution: validate() checks a requested operation against the operator
// table at the requested feature level and produces a ValidatedOp, which carries the DirectML
// description to execute. Backends accept nothing else.
#pragma once

#include <optional>
#include <vector>

#include "dml_desc.hpp"
#include "dmlbits/ops.hpp"
#include "dmlbits/dtype.hpp"

namespace dmlbits {

struct OperandInfo {
  DType dtype{};
  Shape shape;
};

struct OpRequest {
  OpKind op{};
  FeatureLevel level = newest_feature_level();
  std::vector<OperandInfo> inputs;  // arity of op
  std::optional<DType> out_dtype;   // popcount: UINT8 (default) or UINT32; others: the input's
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
  bool in_place = false;  // the output will alias input A
};

class ValidatedOp {
 public:
  const OpInfo& op() const { return op_info(desc_.op); }
  FeatureLevel level() const { return desc_.level; }
  DType input_dtype() const { return desc_.inputs.front().dtype; }
  DType output_dtype() const { return desc_.output.dtype; }
  const Shape& output_shape() const { return output_shape_; }
  const std::vector<Shape>& input_shapes() const { return input_shapes_; }
  ShiftOverflow shift_overflow() const { return desc_.shift_overflow; }
  bool in_place() const { return in_place_; }
  const DmlOperatorDesc& desc() const { return desc_; }

  // True if every input is either the output's shape or a single element, so that any flat
  // range of the output can be computed from the same range of the inputs (or the element).
  bool is_flat_streamable() const;
  // This operation restricted to `count` consecutive output elements, as a 1-D operation:
  // full-shape inputs become runs of `count`, single-element inputs stride-0 scalars. Needs
  // is_flat_streamable(); derived from an already validated operation, so it is valid too.
  ValidatedOp flat_chunk(std::uint64_t count) const;

 private:
  friend ValidatedOp validate(const OpRequest& request);
  ValidatedOp() = default;
  DmlOperatorDesc desc_;
  Shape output_shape_;
  std::vector<Shape> input_shapes_;
  bool in_place_ = false;
};

// Throws Errc::invalid_input naming the op, the offending dtype/count/shape, the requested
// level and the lowest level that would accept the operation, e.g.
// "xor: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)".
ValidatedOp validate(const OpRequest& request);

}  // namespace dmlbits
