// Shapes (dmlbits/dtype.hpp): rank limits, overflow-checked element counts and byte sizes, and
// the two text notations, and NumPy broadcasting of two shapes (hand-computed from NumPy's rules).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "dmlbits/error.hpp"
#include "dmlbits/dtype.hpp"
#include "checked_mul.hpp"

namespace dmlbits {
namespace {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kPtrdiffMax = static_cast<std::uint64_t>(std::numeric_limits<std::ptrdiff_t>::max());

template <class F>
std::string invalid_input_message(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(ShapeTest, DefaultIsZeroDimensionalWithOneElement) {
  const Shape s;
  EXPECT_EQ(s.rank(), 0u);
  EXPECT_TRUE(s.dims().empty());
  EXPECT_EQ(s.element_count(), 1u);
  EXPECT_EQ(s.byte_size(8), 8u);
  EXPECT_EQ(s.to_string(), "()");
  EXPECT_EQ(s.to_list_string(), "[]");
  EXPECT_EQ(s, Shape{});
}

TEST(ShapeTest, ToStringUsesNumPyTupleNotation) {
  EXPECT_EQ(Shape{3}.to_string(), "(3,)");
  EXPECT_EQ(Shape{0}.to_string(), "(0,)");
  EXPECT_EQ((Shape{2, 3}).to_string(), "(2, 3)");
  EXPECT_EQ((Shape{1, 2, 3, 4, 5, 6, 7, 8}).to_string(), "(1, 2, 3, 4, 5, 6, 7, 8)");
  EXPECT_EQ(Shape{kMax}.to_string(), "(18446744073709551615,)");
  EXPECT_EQ((Shape{2621401, 1000}).to_string(), "(2621401, 1000)");  // no digit grouping
}

TEST(ShapeTest, ToListStringUsesCompactLists) {
  EXPECT_EQ(Shape{3}.to_list_string(), "[3]");
  EXPECT_EQ((Shape{2, 3}).to_list_string(), "[2,3]");
  EXPECT_EQ((Shape{2, 0, 4}).to_list_string(), "[2,0,4]");
  EXPECT_EQ(Shape{kMax}.to_list_string(), "[18446744073709551615]");
}

TEST(ShapeTest, HoldsAtMostEightDimensions) {
  Shape s;
  for (std::uint64_t i = 1; i <= kMaxRank; ++i) s.push_back(i);
  EXPECT_EQ(s.rank(), 8u);
  EXPECT_EQ(s.element_count(), 40320u);
  EXPECT_NE(invalid_input_message([&] { s.push_back(1); }).find("more than 8 dimensions"), std::string::npos);
  EXPECT_EQ(s.rank(), 8u);  // unchanged by the refused push

  const std::vector<std::uint64_t> nine(9, 1);
  invalid_input_message([&] { Shape t{std::span<const std::uint64_t>(nine)}; });
  invalid_input_message([&] { Shape t{1, 1, 1, 1, 1, 1, 1, 1, 1}; });
  const std::vector<std::uint64_t> eight(8, 2);
  EXPECT_EQ(Shape(std::span<const std::uint64_t>(eight)).element_count(), 256u);
}

TEST(ShapeTest, IndexingAndDims) {
  Shape s{4, 5, 6};
  EXPECT_EQ(s[0], 4u);
  EXPECT_EQ(s[2], 6u);
  s[1] = 7;
  EXPECT_EQ(s.element_count(), 4u * 7 * 6);
  EXPECT_EQ(std::vector<std::uint64_t>(s.dims().begin(), s.dims().end()), (std::vector<std::uint64_t>{4, 7, 6}));
}

TEST(ShapeTest, ElementCountIsTheProduct) {
  EXPECT_EQ(Shape{7}.element_count(), 7u);
  EXPECT_EQ((Shape{2, 3, 4}).element_count(), 24u);
  EXPECT_EQ((Shape{1, 1, 1}).element_count(), 1u);
  EXPECT_EQ((Shape{4294967296, 4294967295}).element_count(), 18446744069414584320u);
  EXPECT_EQ((Shape{kMax, 1}).element_count(), kMax);
}

TEST(ShapeTest, ZeroDimensionMeansNoElements) {
  EXPECT_EQ(Shape{0}.element_count(), 0u);
  EXPECT_EQ((Shape{0, 3}).element_count(), 0u);
  EXPECT_EQ((Shape{2, 0}).element_count(), 0u);
  EXPECT_EQ((Shape{5, 0, kMax / 5}).element_count(), 0u);
  EXPECT_EQ((Shape{0, 3}).byte_size(8), 0u);
}

TEST(ShapeTest, ElementCountOverflowIsAnError) {
  const std::string msg = invalid_input_message([] { (void)(Shape{4294967296, 4294967296}).element_count(); });
  EXPECT_NE(msg.find("overflows 64 bits"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(4294967296, 4294967296)"), std::string::npos) << msg;
  invalid_input_message([] { (void)(Shape{kMax, 2}).element_count(); });
}

TEST(ShapeTest, ElementCountOverflowWithAZeroDimensionIsStillAnError) {
  // NumPy refuses (0, 2**32, 2**32) too ("array is too big"): the non-zero dimensions' product
  // must fit even when a zero makes the total 0.
  invalid_input_message([] { (void)(Shape{0, 4294967296, 4294967296}).element_count(); });
}

TEST(ShapeTest, ByteSizeIsChecked) {
  EXPECT_EQ((Shape{2, 3}).byte_size(4), 24u);
  EXPECT_EQ(Shape{kPtrdiffMax}.byte_size(1), kPtrdiffMax);
  EXPECT_EQ(Shape{std::uint64_t{1} << 59}.byte_size(8), std::uint64_t{1} << 62);
  // Beyond the address space (more than PTRDIFF_MAX bytes), though the product fits in 64 bits.
  std::string msg = invalid_input_message([] { (void)Shape{kPtrdiffMax + 1}.byte_size(1); });
  EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
  invalid_input_message([] { (void)Shape{std::uint64_t{1} << 62}.byte_size(2); });
  // The product itself overflows 64 bits.
  msg = invalid_input_message([] { (void)Shape{std::uint64_t{1} << 61}.byte_size(8); });
  EXPECT_NE(msg.find("too large"), std::string::npos) << msg;
  invalid_input_message([] { (void)(Shape{3037000500, 3037000500}).byte_size(2); });
  invalid_input_message([] { (void)Shape{kMax}.byte_size(8); });
}

TEST(ShapeTest, CheckedMul) {
  EXPECT_EQ(checked_mul(0, kMax, "x"), 0u);
  EXPECT_EQ(checked_mul(4294967295, 4294967297, "x"), kMax);
  EXPECT_EQ(checked_mul(kMax, 1, "x"), kMax);
  const std::string msg = invalid_input_message([] { (void)checked_mul(4294967296, 4294967296, "the stride"); });
  EXPECT_NE(msg.find("the stride"), std::string::npos) << msg;
  EXPECT_NE(msg.find("overflows 64 bits"), std::string::npos) << msg;
  invalid_input_message([] { (void)checked_mul(kMax, 2, "x"); });
}

TEST(ShapeTest, Equality) {
  EXPECT_EQ((Shape{2, 3}), (Shape{2, 3}));
  EXPECT_NE((Shape{2, 3}), (Shape{3, 2}));
  EXPECT_NE((Shape{2, 3}), (Shape{2, 3, 1}));
  EXPECT_NE(Shape{}, Shape{1});  // 0-d is not (1,), though both hold one element
  EXPECT_NE(Shape{}, Shape{0});
  Shape a{2, 3};
  a.push_back(1);
  EXPECT_EQ(a, (Shape{2, 3, 1}));
}

// ---- broadcast_shapes ----

void expect_broadcast(const Shape& a, const Shape& b, const Shape& want) {
  auto got = broadcast_shapes(a, b);
  ASSERT_TRUE(got) << a.to_string() << " with " << b.to_string();
  EXPECT_EQ(*got, want) << a.to_string() << " with " << b.to_string() << " gave " << got->to_string();
  auto swapped = broadcast_shapes(b, a);  // symmetric
  ASSERT_TRUE(swapped);
  EXPECT_EQ(*swapped, want) << b.to_string() << " with " << a.to_string();
}

TEST(ShapeTest, BroadcastFollowsNumPy) {
  expect_broadcast(Shape{}, Shape{}, Shape{});
  expect_broadcast(Shape{}, Shape{5}, Shape{5});
  expect_broadcast(Shape{3}, Shape{3}, Shape{3});
  expect_broadcast(Shape{2, 3, 4}, Shape{4}, Shape{2, 3, 4});
  expect_broadcast(Shape{3, 1}, Shape{1, 4}, Shape{3, 4});
  expect_broadcast(Shape{2, 1, 3}, Shape{4, 1}, Shape{2, 4, 3});
  expect_broadcast(Shape{1}, Shape{7, 1, 2}, Shape{7, 1, 2});
  expect_broadcast(Shape{1, 1}, Shape{1}, Shape{1, 1});
  // A zero dimension broadcasts like any other size: 1 stretches to 0.
  expect_broadcast(Shape{0}, Shape{1}, Shape{0});
  expect_broadcast(Shape{1, 0}, Shape{4, 1}, Shape{4, 0});
  expect_broadcast(Shape{0, 3}, Shape{3}, Shape{0, 3});
  expect_broadcast(Shape{2, 1, 2, 1, 2, 1, 2, 1}, Shape{3}, Shape{2, 1, 2, 1, 2, 1, 2, 3});
  expect_broadcast(Shape{1, 2, 1, 2, 1, 2, 1, 2}, Shape{2, 1, 2, 1, 2, 1, 2, 1}, Shape{2, 2, 2, 2, 2, 2, 2, 2});
}

TEST(ShapeTest, BroadcastRefusesIncompatibleShapes) {
  EXPECT_FALSE(broadcast_shapes(Shape{3}, Shape{4}));
  EXPECT_FALSE(broadcast_shapes(Shape{2, 3}, Shape{4}));
  EXPECT_FALSE(broadcast_shapes(Shape{2, 3}, Shape{3, 2}));
  EXPECT_FALSE(broadcast_shapes(Shape{0}, Shape{2}));  // 0 is not 1
  EXPECT_FALSE(broadcast_shapes(Shape{4}, Shape{2, 1, 3}));
}

}  // namespace
}  // namespace dmlbits
