// The operator table (dmlbits/ops.hpp): its DML_ELEMENT_WISE_BIT_* rows in DML_OPERATOR_TYPE
// order (each operator's DirectML values are checked against the documentation in
// validate_test.cpp), the support tiers by feature level, and the verbs and aliases find_op
// answers to.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "dmlbits/ops.hpp"

namespace dmlbits {
namespace {

// Each operator's DirectML values are validate_test.cpp's, against the documentation; here, what
// the table keeps of them: its rows in DML_OPERATOR_TYPE order, each found by its kind.
TEST(OpTableTest, RowsInDirectMlsEnumOrder) {
  ASSERT_FALSE(op_table().empty());
  for (std::size_t i = 0; i < op_table().size(); ++i) {
    const OpInfo& op = op_table()[i];
    EXPECT_EQ(&op_info(op.kind), &op) << op.verb;
    EXPECT_EQ(static_cast<std::size_t>(op.kind), i) << op.verb;
    if (i > 0) {
      EXPECT_LT(op_table()[i - 1].dml_enum, op.dml_enum) << op.verb;
    }
    EXPECT_EQ(op.dml_operator_name().rfind("DML_OPERATOR_ELEMENT_WISE_BIT_", 0), 0u) << op.verb;
    EXPECT_FALSE(op.summary.empty()) << op.verb;
  }
}

TEST(OpTableTest, DescNamesAndTensorFields) {
  EXPECT_EQ(op_info(OpKind::bit_and).dml_desc_name(), "DML_ELEMENT_WISE_BIT_AND_OPERATOR_DESC");
  EXPECT_EQ(op_info(OpKind::popcount).dml_desc_name(), "DML_ELEMENT_WISE_BIT_COUNT_OPERATOR_DESC");
  EXPECT_EQ(op_info(OpKind::shl).input_field_names(), (std::vector<std::string_view>{"ATensor", "BTensor"}));
  EXPECT_EQ(op_info(OpKind::bit_not).input_field_names(), (std::vector<std::string_view>{"InputTensor"}));
}

TEST(OpTableTest, OnlyPopcountHasItsOwnOutputTypesAndRefusesInPlace) {
  for (const auto& op : op_table()) {
    EXPECT_EQ(op.output_dtype_is_input_dtype(), op.kind != OpKind::popcount) << op.verb;
    EXPECT_EQ(op.allows_in_place(), op.kind != OpKind::popcount) << op.verb;
  }
}

TEST(OpTableTest, TiersByFeatureLevel) {
  const OpInfo& shl = op_info(OpKind::shl);
  // The shifts arrived in 2_1 for 4-D tensors of 8- to 32-bit unsigned integers.
  EXPECT_EQ(shl.introduced(), FeatureLevel(2, 1));
  EXPECT_EQ(shl.tier_at(FeatureLevel(2, 0)), nullptr);
  const OpTier* t21 = shl.tier_at(FeatureLevel(2, 1));
  ASSERT_NE(t21, nullptr);
  EXPECT_TRUE(t21->dims.contains(4));
  EXPECT_FALSE(t21->dims.contains(3));
  EXPECT_FALSE(t21->dims.contains(5));
  // 3_0 opens 1 to 8 dimensions; 4_1 adds uint64.
  const OpTier* t30 = shl.tier_at(FeatureLevel(3, 0));
  ASSERT_NE(t30, nullptr);
  EXPECT_TRUE(t30->dims.contains(1));
  EXPECT_TRUE(t30->dims.contains(8));
  EXPECT_FALSE(t30->dims.contains(9));
  EXPECT_FALSE(t30->dims.contains(0));
  EXPECT_EQ(shl.tier_at(FeatureLevel(4, 0)), t30);  // in force until the next tier
  EXPECT_EQ(shl.tier_at(FeatureLevel(4, 1))->level, FeatureLevel(4, 1));
  EXPECT_EQ(shl.tier_at(FeatureLevel(6, 4))->level, FeatureLevel(4, 1));
}

TEST(FindOpTest, VerbsAndAliases) {
  EXPECT_EQ(find_op("and"), &op_info(OpKind::bit_and));
  EXPECT_EQ(find_op("bit-and"), &op_info(OpKind::bit_and));
  EXPECT_EQ(find_op("BIT_AND"), &op_info(OpKind::bit_and));
  EXPECT_EQ(find_op("DML_OPERATOR_ELEMENT_WISE_BIT_AND"), &op_info(OpKind::bit_and));
  EXPECT_EQ(find_op("bit-shift-left"), &op_info(OpKind::shl));
  EXPECT_EQ(find_op("bit-count"), &op_info(OpKind::popcount));
  EXPECT_EQ(find_op("BIT_COUNT"), &op_info(OpKind::popcount));
  EXPECT_EQ(op_info(OpKind::shr).aliases(), (std::vector<std::string>{"bit-shift-right", "BIT_SHIFT_RIGHT",
                                                                      "DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_RIGHT"}));
  for (const char* unknown : {"", "AND", "nand", "bit_and", "popcnt", "DML_ELEMENT_WISE_BIT_AND_OPERATOR_DESC"})
    EXPECT_EQ(find_op(unknown), nullptr) << unknown;
}

TEST(FindOpTest, NoNameIsShared) {
  std::set<std::string> names;
  for (const auto& op : op_table()) {
    EXPECT_TRUE(names.insert(std::string(op.verb)).second) << op.verb;
    for (const auto& a : op.aliases()) EXPECT_TRUE(names.insert(a).second) << a;
  }
  EXPECT_EQ(names.size(), op_table().size() * 4);  // the verb and three aliases each
}

TEST(ShiftOverflowTest, Names) {
  EXPECT_EQ(shift_overflow_name(ShiftOverflow::zero), "zero");
  EXPECT_EQ(shift_overflow_name(ShiftOverflow::wrap), "wrap");
  EXPECT_EQ(shift_overflow_name(ShiftOverflow::directml), "directml");
  for (ShiftOverflow m : shift_overflow_modes()) EXPECT_EQ(parse_shift_overflow(shift_overflow_name(m)), m);
  EXPECT_FALSE(parse_shift_overflow("DirectML"));
  EXPECT_FALSE(parse_shift_overflow("clamp"));
  EXPECT_FALSE(parse_shift_overflow(""));
  EXPECT_EQ(shift_overflow_names_help(), "directml, zero or wrap");
  EXPECT_EQ(shift_overflow_names_help("'"), "'directml', 'zero' or 'wrap'");
}

// dmlbits promises DirectML's results: DirectML's measured rule is the default, listed first.
TEST(ShiftOverflowTest, DirectmlIsTheDefault) {
  EXPECT_EQ(kDefaultShiftOverflow, ShiftOverflow::directml);
  ASSERT_EQ(shift_overflow_modes().size(), 3u);
  EXPECT_EQ(shift_overflow_modes().front(), kDefaultShiftOverflow);
}

}  // namespace
}  // namespace dmlbits
