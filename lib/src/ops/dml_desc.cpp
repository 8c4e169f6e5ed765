#include "dml_desc.hpp"

#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checked_mul.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits {

std::uint64_t DmlTensorDesc::element_count() const {
  std::uint64_t n = 1;
  for (auto s : sizes) n = checked_mul(n, s, "element count");
  return n;
}

bool DmlTensorDesc::is_packed() const {
  std::uint64_t expect = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] != 1 && strides[i] != expect) return false;
    expect *= sizes[i];
  }
  return true;
}

std::uint64_t calc_buffer_tensor_size(DType dtype, const std::vector<std::uint64_t>& sizes,
                                      const std::vector<std::uint64_t>& strides) {
  std::uint64_t last = 0;  // index of the last element, in elements
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) return 0;
    last += (sizes[i] - 1) * strides[i];
  }
  const std::uint64_t bits = (last + 1) * dtype_info(dtype).bits();
  const std::uint64_t bytes = (bits + 7) / 8;
  return (bytes + 3) & ~std::uint64_t{3};
}

DmlTensorDesc make_tensor_desc(DType dtype, const Shape& in_shape, const Shape& out_shape) {
  DmlTensorDesc d;
  d.dtype = dtype;
  const std::size_t rank = std::max<std::size_t>(out_shape.rank(), 1);
  d.sizes.assign(rank, 1);
  d.strides.assign(rank, 0);
  const std::size_t offset = rank - out_shape.rank();
  for (std::size_t i = 0; i < out_shape.rank(); ++i) d.sizes[offset + i] = out_shape[i];
  // Packed strides of the input, right-aligned; a dimension the input does not have, or has as
  // 1 where the output is larger, gets stride 0.
  std::uint64_t stride = 1;
  for (std::size_t k = 0; k < in_shape.rank(); ++k) {
    const std::size_t in_i = in_shape.rank() - 1 - k;
    const std::size_t out_i = rank - 1 - k;
    const bool broadcast = in_shape[in_i] == 1 && d.sizes[out_i] != 1;
    d.strides[out_i] = broadcast ? 0 : stride;
    stride *= in_shape[in_i];
  }
  // Size-1 dimensions of a packed tensor keep a conventional stride so that non-broadcast
  // inputs print as the ordinary row-major strides.
  if (in_shape == out_shape) {
    std::uint64_t s = 1;
    for (std::size_t i = rank; i-- > 0;) {
      d.strides[i] = s;
      s *= d.sizes[i];
    }
  }
  d.total_bytes = calc_buffer_tensor_size(dtype, d.sizes, d.strides);
  return d;
}

nlohmann::json to_json(const DmlTensorDesc& d) {
  // DML_BUFFER_TENSOR_DESC's Sizes and Strides are 32-bit UINTs: a larger value (an empty
  // tensor's [0, 5000000000], or a dimension of more than 4 Gi elements) is no description
  // DirectML could be given, so none is printed; the DxDispatch model refuses it alike.
  for (const auto* values : {&d.sizes, &d.strides})
    for (const std::uint64_t v : *values)
      if (v > std::numeric_limits<std::uint32_t>::max())
        throw Error(Errc::unsupported,
                    fmt::format("DirectML cannot describe this tensor: its {} {} does not fit DirectML's 32-bit UINT",
                                values == &d.sizes ? "size" : "stride", v));
  return {
      {"Type", "DML_TENSOR_TYPE_BUFFER"},
      {"DataType", dtype_info(d.dtype).dml_enum_name()},
      {"Flags", "DML_TENSOR_FLAG_NONE"},
      {"DimensionCount", d.sizes.size()},
      {"Sizes", d.sizes},
      {"Strides", d.strides},
      {"TotalTensorSizeInBytes", d.total_bytes},
      {"GuaranteedBaseOffsetAlignment", d.guaranteed_base_offset_alignment},
  };
}

nlohmann::json to_json(const DmlOperatorDesc& d) {
  const OpInfo& op = op_info(d.op);
  nlohmann::json tensors = nlohmann::json::object();
  const auto names = op.input_field_names();
  for (std::size_t i = 0; i < d.inputs.size(); ++i) tensors[std::string(names[i])] = to_json(d.inputs[i]);
  tensors["OutputTensor"] = to_json(d.output);
  nlohmann::json notes = {{"verb", op.verb}, {"empty", d.empty}};
  if (op.shift) notes["shift_overflow"] = shift_overflow_name(d.shift_overflow);
  return {
      {"operator", op.dml_operator_name()},
      {"operator_value", op.dml_enum},
      {"desc_type", op.dml_desc_name()},
      {"feature_level", d.level.enum_name()},
      {"tensors", tensors},
      {"dmlbits", notes},
  };
}

}  // namespace dmlbits
