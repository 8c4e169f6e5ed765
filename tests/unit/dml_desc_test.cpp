// DirectML descriptors: stride-0 broadcast dimensions, DMLCalcBufferTensorSize
// and the JSON field names. Expected values are hand-computed from NumPy's rules and
// directml-bitwise.md ("round up to a multiple of 4 of ceil(((sum (Sizes[i]-1)*Strides[i]) + 1)
// * element_bits / 8)").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dml_desc.hpp"
#include "validate.hpp"

namespace dmlbits {
namespace {

using U64s = std::vector<std::uint64_t>;

// ---- make_tensor_desc ----

TEST(DmlDescTest, PackedTensorHasRowMajorStrides) {
  const auto d = make_tensor_desc(DType::float32, Shape{2, 3, 4}, Shape{2, 3, 4});
  EXPECT_EQ(d.sizes, (U64s{2, 3, 4}));
  EXPECT_EQ(d.strides, (U64s{12, 4, 1}));
  EXPECT_EQ(d.total_bytes, 96u);  // 24 elements x 4 bytes
  EXPECT_TRUE(d.is_packed());
  EXPECT_EQ(d.element_count(), 24u);
  EXPECT_EQ(d.flags, 0u);
}

TEST(DmlDescTest, BroadcastDimensionsGetStrideZero) {
  // (4,) read as (2, 3, 4): the two missing leading dimensions repeat it.
  auto d = make_tensor_desc(DType::uint8, Shape{4}, Shape{2, 3, 4});
  EXPECT_EQ(d.sizes, (U64s{2, 3, 4}));
  EXPECT_EQ(d.strides, (U64s{0, 0, 1}));
  EXPECT_EQ(d.total_bytes, 4u);  // 4 one-byte elements
  EXPECT_FALSE(d.is_packed());
  EXPECT_EQ(d.element_count(), 24u);

  d = make_tensor_desc(DType::uint16, Shape{3, 1}, Shape{3, 4});
  EXPECT_EQ(d.sizes, (U64s{3, 4}));
  EXPECT_EQ(d.strides, (U64s{1, 0}));
  EXPECT_EQ(d.total_bytes, 8u);  // 3 x 2 = 6 bytes, rounded up to 8

  d = make_tensor_desc(DType::uint16, Shape{1, 4}, Shape{3, 4});
  EXPECT_EQ(d.strides, (U64s{0, 1}));
  EXPECT_EQ(d.total_bytes, 8u);  // 4 x 2

  // (2, 1, 3) read as (2, 4, 3): the middle dimension repeats; A's own strides are (3, 3, 1).
  d = make_tensor_desc(DType::uint64, Shape{2, 1, 3}, Shape{2, 4, 3});
  EXPECT_EQ(d.strides, (U64s{3, 0, 1}));
  EXPECT_EQ(d.total_bytes, 48u);  // last index 3 + 2 = 5 -> 6 elements x 8

  // (4, 1) read as (2, 4, 3).
  d = make_tensor_desc(DType::uint32, Shape{4, 1}, Shape{2, 4, 3});
  EXPECT_EQ(d.strides, (U64s{0, 1, 0}));
  EXPECT_EQ(d.total_bytes, 16u);
}

TEST(DmlDescTest, ZeroDimensionalIsOneDimensionOfSizeOne) {
  auto d = make_tensor_desc(DType::int8, Shape{}, Shape{});
  EXPECT_EQ(d.sizes, (U64s{1}));
  EXPECT_EQ(d.dimension_count(), 1u);
  EXPECT_EQ(d.strides.size(), 1u);
  EXPECT_EQ(d.total_bytes, 4u);  // 1 byte, rounded up to 4
  EXPECT_EQ(d.element_count(), 1u);

  // A 0-d operand broadcast to (5,) reads its one element five times.
  d = make_tensor_desc(DType::float16, Shape{}, Shape{5});
  EXPECT_EQ(d.sizes, (U64s{5}));
  EXPECT_EQ(d.strides, (U64s{0}));
  EXPECT_EQ(d.total_bytes, 4u);  // 2 bytes -> 4
}

TEST(DmlDescTest, EightDimensionsWithBroadcast) {
  const Shape out{2, 1, 2, 1, 2, 1, 2, 3};
  auto d = make_tensor_desc(DType::uint16, Shape{3}, out);
  EXPECT_EQ(d.sizes, (U64s{2, 1, 2, 1, 2, 1, 2, 3}));
  ASSERT_EQ(d.strides.size(), 8u);
  for (std::size_t i = 0; i < 7; ++i) {
    if (d.sizes[i] != 1) {
      EXPECT_EQ(d.strides[i], 0u) << i;  // size-1 dims never advance, whatever their stride
    }
  }
  EXPECT_EQ(d.strides[7], 1u);
  EXPECT_EQ(d.total_bytes, 8u);  // 3 x 2 -> 8

  d = make_tensor_desc(DType::uint16, out, out);
  EXPECT_EQ(d.strides, (U64s{24, 24, 12, 12, 6, 6, 3, 1}));
  EXPECT_EQ(d.total_bytes, 96u);  // 48 x 2
}

TEST(DmlDescTest, EmptyTensorNeedsNoBytes) {
  const auto d = make_tensor_desc(DType::uint32, Shape{2, 0, 3}, Shape{2, 0, 3});
  EXPECT_EQ(d.element_count(), 0u);
  EXPECT_EQ(d.total_bytes, 0u);
}

// ---- calc_buffer_tensor_size ----

TEST(DmlDescTest, CalcBufferTensorSizeMatchesDirectMLsRule) {
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint8, {3}, {1}), 4u);          // 3 -> 4
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint8, {4}, {1}), 4u);          // exactly 4
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint8, {5}, {1}), 8u);          // 5 -> 8
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint16, {2, 3}, {0, 1}), 8u);   // 3 elements, 6 -> 8
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint16, {2, 3}, {3, 1}), 12u);  // 6 elements x 2
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint8, {5}, {0}), 4u);          // 1 element
  EXPECT_EQ(calc_buffer_tensor_size(DType::float16, {1}, {1}), 4u);        // 2 -> 4
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint32, {2, 2}, {2, 1}), 16u);
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint64, {2, 3}, {3, 1}), 48u);
  EXPECT_EQ(calc_buffer_tensor_size(DType::int8, {2, 3}, {4, 1}), 8u);  // padded rows: last 6 -> 7 -> 8
  EXPECT_EQ(calc_buffer_tensor_size(DType::float64, {3, 1}, {1, 0}), 24u);
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint32, {1, 1, 1, 1}, {1, 1, 1, 1}), 4u);
  EXPECT_EQ(calc_buffer_tensor_size(DType::uint8, {2, 0, 3}, {0, 3, 1}), 0u);  // empty
}

// ---- JSON ----

TEST(DmlDescTest, TensorDescJsonUsesDirectMLFieldNames) {
  const auto j = to_json(make_tensor_desc(DType::uint16, Shape{3, 1}, Shape{3, 4}));
  EXPECT_EQ(j.at("Type"), "DML_TENSOR_TYPE_BUFFER");
  EXPECT_EQ(j.at("DataType"), "DML_TENSOR_DATA_TYPE_UINT16");
  EXPECT_EQ(j.at("Flags"), "DML_TENSOR_FLAG_NONE");
  EXPECT_EQ(j.at("DimensionCount"), 2);
  EXPECT_EQ(j.at("Sizes"), nlohmann::json::parse("[3,4]"));
  EXPECT_EQ(j.at("Strides"), nlohmann::json::parse("[1,0]"));
  EXPECT_EQ(j.at("TotalTensorSizeInBytes"), 8);
  EXPECT_EQ(j.at("GuaranteedBaseOffsetAlignment"), 0);
  EXPECT_EQ(j.size(), 8u);
}

TEST(DmlDescTest, OperatorDescJsonNamesTheDescFields) {
  OpRequest r;
  r.op = OpKind::bit_xor;
  r.level = FeatureLevel(4, 1);
  r.inputs = {{DType::int32, Shape{2, 3}}, {DType::int32, Shape{3}}};
  auto j = to_json(validate(r).desc());
  EXPECT_EQ(j.at("operator"), "DML_OPERATOR_ELEMENT_WISE_BIT_XOR");
  EXPECT_EQ(j.at("operator_value"), 123);
  EXPECT_EQ(j.at("desc_type"), "DML_ELEMENT_WISE_BIT_XOR_OPERATOR_DESC");
  EXPECT_EQ(j.at("feature_level"), "DML_FEATURE_LEVEL_4_1");
  const auto& t = j.at("tensors");
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.at("ATensor").at("Strides"), nlohmann::json::parse("[3,1]"));
  EXPECT_EQ(t.at("BTensor").at("Strides"), nlohmann::json::parse("[0,1]"));
  EXPECT_EQ(t.at("BTensor").at("Sizes"), nlohmann::json::parse("[2,3]"));
  EXPECT_EQ(t.at("OutputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_INT32");
  EXPECT_EQ(j.at("dmlbits").at("verb"), "xor");
  EXPECT_FALSE(j.at("dmlbits").contains("shift_overflow"));

  OpRequest p;
  p.op = OpKind::popcount;
  p.inputs = {{DType::float16, Shape{4}}};
  p.out_dtype = DType::uint32;
  j = to_json(validate(p).desc());
  EXPECT_EQ(j.at("operator"), "DML_OPERATOR_ELEMENT_WISE_BIT_COUNT");
  EXPECT_EQ(j.at("operator_value"), 125);
  EXPECT_EQ(j.at("desc_type"), "DML_ELEMENT_WISE_BIT_COUNT_OPERATOR_DESC");
  EXPECT_EQ(j.at("feature_level"), "DML_FEATURE_LEVEL_6_4");  // the default: the newest
  EXPECT_TRUE(j.at("tensors").contains("InputTensor"));
  EXPECT_TRUE(j.at("tensors").contains("OutputTensor"));
  EXPECT_EQ(j.at("tensors").size(), 2u);
  EXPECT_EQ(j.at("tensors").at("InputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_FLOAT16");
  EXPECT_EQ(j.at("tensors").at("OutputTensor").at("DataType"), "DML_TENSOR_DATA_TYPE_UINT32");
  EXPECT_EQ(j.at("tensors").at("OutputTensor").at("TotalTensorSizeInBytes"), 16);

  OpRequest s;
  s.op = OpKind::shl;
  s.inputs = {{DType::uint8, Shape{4}}, {DType::uint8, Shape{}}};
  s.shift_overflow = ShiftOverflow::wrap;
  j = to_json(validate(s).desc());
  EXPECT_EQ(j.at("operator"), "DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_LEFT");
  EXPECT_EQ(j.at("operator_value"), 97);
  EXPECT_EQ(j.at("dmlbits").at("shift_overflow"), "wrap");
  s.shift_overflow = kDefaultShiftOverflow;
  EXPECT_EQ(to_json(validate(s).desc()).at("dmlbits").at("shift_overflow"), "directml");
  EXPECT_EQ(j.at("tensors").at("BTensor").at("Strides"), nlohmann::json::parse("[0]"));
}

}  // namespace
}  // namespace dmlbits
