// The DirectML operator description dmlbits executes: DML_BUFFER_TENSOR_DESCs (data type,
// sizes, strides in elements, TotalTensorSizeInBytes) for each tensor of a
// DML_ELEMENT_WISE_BIT_*_OPERATOR_DESC. NumPy broadcasting is expressed, as DirectML requires,
// with stride-0 dimensions. Backends execute from these descriptors, so `--explain` prints what
// runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "dmlbits/dtype.hpp"
#include "dmlbits/ops.hpp"

namespace dmlbits {

struct DmlTensorDesc {
  DType dtype{};
  std::vector<std::uint64_t> sizes;    // DimensionCount entries, at least 1
  std::vector<std::uint64_t> strides;  // in elements; 0 broadcasts
  std::uint64_t total_bytes = 0;       // TotalTensorSizeInBytes
  std::uint32_t flags = 0;             // DML_TENSOR_FLAG_NONE
  std::uint32_t guaranteed_base_offset_alignment = 0;

  std::size_t dimension_count() const { return sizes.size(); }
  std::uint64_t element_count() const;  // of the logical (broadcast) tensor
  bool is_packed() const;               // strides are the row-major ones for sizes
};

struct DmlOperatorDesc {
  OpKind op{};
  FeatureLevel level;
  std::vector<DmlTensorDesc> inputs;
  DmlTensorDesc output;
  ShiftOverflow shift_overflow = kDefaultShiftOverflow;
  // DirectML sizes cannot be 0; an empty result is produced without dispatching anything.
  bool empty = false;
};

// DMLCalcBufferTensorSize: ceil(((sum (sizes[i]-1)*strides[i]) + 1) * bits / 8), rounded up to a
// multiple of 4. For a tensor with a zero size, 0.
std::uint64_t calc_buffer_tensor_size(DType dtype, const std::vector<std::uint64_t>& sizes,
                                      const std::vector<std::uint64_t>& strides);

// The descriptor of `input` (shape `in_shape`) read as a tensor of shape `out_shape`: sizes are
// out_shape's, strides are the packed strides of in_shape with 0 where it broadcasts. A 0-d
// shape becomes 1 dimension of size 1 (DirectML's DimensionCount is at least 1).
DmlTensorDesc make_tensor_desc(DType dtype, const Shape& in_shape, const Shape& out_shape);

nlohmann::json to_json(const DmlTensorDesc& d);
// {"operator", "desc_type", "feature_level", "tensors": {...}, "dmlbits": {...}}
nlohmann::json to_json(const DmlOperatorDesc& d);

}  // namespace dmlbits
