// validate() against the DirectML support facts. The facts are typed in here from
// shared/reference/directml-bitwise.md, independently of ops.cpp, so that a wrong row in the
// operator table makes these tests fail instead of being read back and agreed with.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "dmlbits/error.hpp"
#include "validate.hpp"

namespace dmlbits {
namespace {

// ---- The documented facts (directml-bitwise.md), keyed by verb and DirectML type name. ----

// DML_FEATURE_LEVEL_x_y = 0xXY00, oldest first.
constexpr int kDocLevels[] = {0x1000, 0x2000, 0x2100, 0x3000, 0x3100, 0x4000, 0x4100, 0x5000,
                              0x5100, 0x5200, 0x6000, 0x6100, 0x6200, 0x6300, 0x6400};

const std::set<std::string_view> kDocU8To32{"UINT8", "UINT16", "UINT32"};
const std::set<std::string_view> kDocUnsigned{"UINT8", "UINT16", "UINT32", "UINT64"};
const std::set<std::string_view> kDocAll{"FLOAT64", "FLOAT32", "FLOAT16", "INT64",  "INT32", "INT16",
                                         "INT8",    "UINT64",  "UINT32",  "UINT16", "UINT8"};

// Each operator's facts, by verb: its DirectML operator type (DirectML.h's name and
// DML_OPERATOR_TYPE value), its inputs, and whether it is a shift (whose tiers differ). The
// tests go over the operator table and look each operator up here: one missing fails them.
struct DocOp {
  std::string_view dml_operator;
  int value, arity;
  bool shift;
};
const std::map<std::string_view, DocOp> kDocOps{
    {"shl", {"DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_LEFT", 97, 2, true}},
    {"shr", {"DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_RIGHT", 98, 2, true}},
    {"and", {"DML_OPERATOR_ELEMENT_WISE_BIT_AND", 121, 2, false}},
    {"or", {"DML_OPERATOR_ELEMENT_WISE_BIT_OR", 122, 2, false}},
    {"xor", {"DML_OPERATOR_ELEMENT_WISE_BIT_XOR", 123, 2, false}},
    {"not", {"DML_OPERATOR_ELEMENT_WISE_BIT_NOT", 124, 1, false}},
    {"popcount", {"DML_OPERATOR_ELEMENT_WISE_BIT_COUNT", 125, 1, false}},
};

const DocOp& doc_op(std::string_view verb) {
  const auto it = kDocOps.find(verb);
  if (it == kDocOps.end())
    throw std::logic_error("validate_test.cpp has no documented facts for operator '" + std::string(verb) +
                           "': add its row to kDocOps");
  return it->second;
}

bool is_shift(std::string_view verb) { return doc_op(verb).shift; }

int doc_introduced(std::string_view verb) { return is_shift(verb) ? 0x2100 : 0x3000; }

// The input types the op takes at `level` (empty before its introduction).
std::set<std::string_view> doc_inputs(std::string_view verb, int level) {
  if (level < doc_introduced(verb)) return {};
  if (level < 0x4100) return kDocU8To32;
  return is_shift(verb) ? kDocUnsigned : kDocAll;
}

bool doc_dims_ok(std::string_view verb, int level, std::size_t dims) {
  if (is_shift(verb) && level < 0x3000) return dims == 4;
  return dims >= 1 && dims <= 8;
}

bool doc_accepts(std::string_view verb, std::string_view dtype, int level, std::size_t dims) {
  return doc_inputs(verb, level).contains(dtype) && doc_dims_ok(verb, level, dims);
}

std::optional<int> doc_lowest(std::string_view verb, std::string_view dtype, std::size_t dims) {
  for (int l : kDocLevels)
    if (doc_accepts(verb, dtype, l, dims)) return l;
  return std::nullopt;
}

std::string level_short(int value) { return std::to_string(value >> 12) + "_" + std::to_string((value >> 8) & 0xf); }
std::string level_enum(int value) { return "DML_FEATURE_LEVEL_" + level_short(value); }

// ---- Helpers ----

Shape shape_of_rank(std::size_t rank) {
  // Distinct small sizes so a wrong dimension would show.
  static constexpr std::uint64_t kDims[] = {2, 1, 3, 2, 1, 2, 1, 3};
  Shape s;
  for (std::size_t i = 0; i < rank; ++i) s.push_back(kDims[i]);
  return s;
}

OpRequest request(OpKind op, DType dtype, FeatureLevel level, const Shape& shape) {
  OpRequest r;
  r.op = op;
  r.level = level;
  for (int i = 0; i < op_info(op).arity; ++i) r.inputs.push_back({dtype, shape});
  return r;
}

// validate()'s refusal message, or nullopt if it accepted. Any other failure is a test failure.
std::optional<std::string> refusal(const OpRequest& r) {
  try {
    (void)validate(r);
    return std::nullopt;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input) << e.what();
    return std::string(e.what());
  }
}

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// ---- The tables themselves ----

TEST(ValidateTest, FeatureLevelsAreDirectMLs) {
  const auto levels = feature_levels();
  ASSERT_EQ(levels.size(), std::size(kDocLevels));
  for (std::size_t i = 0; i < levels.size(); ++i) {
    EXPECT_EQ(levels[i].value(), kDocLevels[i]) << i;
    EXPECT_EQ(levels[i].short_name(), level_short(kDocLevels[i]));
  }
}

TEST(ValidateTest, OpTableNamesAndEnumsAreDirectMLs) {
  for (const OpInfo& op : op_table()) {
    const DocOp& doc = doc_op(op.verb);
    EXPECT_EQ(op.dml_operator_name(), doc.dml_operator);
    EXPECT_EQ(op.dml_enum, doc.value) << op.verb;
    EXPECT_EQ(op.arity, doc.arity) << op.verb;
    EXPECT_EQ(op.introduced().value(), doc_introduced(op.verb)) << op.verb;
    EXPECT_EQ(find_op(op.verb), &op) << op.verb;
    EXPECT_EQ(&op_info(op.kind), &op) << op.verb;
  }
  // And the other way: an operator documented here that the table lost.
  for (const auto& [verb, doc] : kDocOps) EXPECT_NE(find_op(verb), nullptr) << verb;
}

TEST(ValidateTest, DTypeTableHasDirectMLsEnumValues) {
  const std::pair<std::string_view, int> rows[] = {
      {"FLOAT32", 1}, {"FLOAT16", 2}, {"UINT32", 3},  {"UINT16", 4},  {"UINT8", 5},  {"INT32", 6},
      {"INT16", 7},   {"INT8", 8},    {"FLOAT64", 9}, {"UINT64", 10}, {"INT64", 11},
  };
  ASSERT_EQ(dtype_table().size(), std::size(rows));
  for (const auto& [name, value] : rows) {
    auto it = std::find_if(dtype_table().begin(), dtype_table().end(),
                           [&](const DTypeInfo& d) { return d.dml_name == name; });
    ASSERT_NE(it, dtype_table().end()) << name;
    EXPECT_EQ(it->dml_value, value) << name;
  }
}

// ---- Every op x dtype x level x dimension count ----

TEST(ValidateTest, AcceptsExactlyWhatTheDocumentedTierAllows) {
  int accepted = 0, refused = 0;
  for (const OpInfo& op : op_table()) {
    for (const DTypeInfo& dt : dtype_table()) {
      for (FeatureLevel level : feature_levels()) {
        for (std::size_t rank : {0u, 1u, 3u, 4u, 8u}) {
          const std::size_t dims = std::max<std::size_t>(rank, 1);  // 0-d is 1 dimension of size 1
          const bool want = doc_accepts(op.verb, dt.dml_name, level.value(), dims);
          const auto why = refusal(request(op.kind, dt.dtype, level, shape_of_rank(rank)));
          const std::string ctx = std::string(op.verb) + " " + std::string(dt.dml_name) + " at " + level.short_name() +
                                  " rank " + std::to_string(rank);
          EXPECT_EQ(!why.has_value(), want) << ctx << (why ? ": " + *why : std::string(": accepted"));
          if (!why) {
            ++accepted;
            continue;
          }
          ++refused;
          if (want) continue;  // already reported
          const std::string& msg = *why;
          EXPECT_TRUE(msg.starts_with(std::string(op.verb) + ": ")) << ctx << ": " << msg;
          if (level.value() < doc_introduced(op.verb)) {
            // Refused because the operator does not exist yet: the message points to the lowest
            // level accepting the whole operation, or says that none does.
            if (auto lowest = doc_lowest(op.verb, dt.dml_name, dims))
              EXPECT_TRUE(
                  contains(msg, " " + level_enum(*lowest) + " or later (requested " + level.short_name() + ")") &&
                  (contains(msg, "needs ") || contains(msg, "need ")))  // "2 dimensions need"
                  << ctx << ": " << msg;
            else EXPECT_TRUE(contains(msg, "not supported at any feature level")) << ctx << ": " << msg;
            continue;
          }
          const bool dtype_offends = !doc_inputs(op.verb, level.value()).contains(dt.dml_name);
          if (dtype_offends) {
            EXPECT_TRUE(contains(msg, "data type " + std::string(dt.dml_name))) << ctx << ": " << msg;
          }
          if (auto lowest = doc_lowest(op.verb, dt.dml_name, dims)) {
            EXPECT_TRUE(contains(msg, " " + level_enum(*lowest) + " or later (requested " + level.short_name() + ")") &&
                        (contains(msg, "needs ") || contains(msg, "need ")))  // "2 dimensions need"
                << ctx << ": " << msg;
          } else {
            EXPECT_TRUE(contains(msg, "not supported at any feature level")) << ctx << ": " << msg;
          }
        }
      }
    }
  }
  // 7 ops x 11 dtypes x 15 levels x 5 ranks.
  EXPECT_EQ(accepted + refused, 7 * 11 * 15 * 5);
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
}

// Before an operator exists, the message should still point at a level that accepts the whole
// operation (validate.hpp: "the lowest level that would accept the operation"): xor of INT32 at
// 2_0 needs 4_1, not 3_0, and a shift of INT32 is accepted nowhere.
TEST(ValidateTest, BeforeIntroductionNamesTheLowestLevelAcceptingTheOperation) {
  std::vector<std::string> wrong;  // one line per bad message, reported together
  int checked = 0;
  for (const OpInfo& op : op_table()) {
    for (const DTypeInfo& dt : dtype_table()) {
      for (FeatureLevel level : feature_levels()) {
        if (level.value() >= doc_introduced(op.verb)) continue;
        // 4-d: every tier takes it, so only the operator and the data type decide.
        const auto why = refusal(request(op.kind, dt.dtype, level, Shape{1, 2, 1, 3}));
        ASSERT_TRUE(why.has_value());
        ++checked;
        const std::string ctx = std::string(op.verb) + " " + std::string(dt.dml_name) + " at " + level.short_name();
        bool ok = false;
        std::string want;
        if (auto lowest = doc_lowest(op.verb, dt.dml_name, 4)) {
          want = "needs " + level_enum(*lowest) + " or later (requested " + level.short_name() + ")";
          ok = contains(*why, want);
        } else {
          want = std::string(dt.dml_name) + " ... not supported at any feature level";
          ok = contains(*why, std::string(dt.dml_name)) && contains(*why, "not supported at any feature level");
        }
        if (!ok) wrong.push_back(ctx + ": got \"" + *why + "\", want \"" + want + "\"");
      }
    }
  }
  EXPECT_EQ(checked, 2 * 11 * 2 + 5 * 11 * 3);
  std::string report;
  for (std::size_t i = 0; i < wrong.size() && i < 6; ++i) report += "\n  " + wrong[i];
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " of " << checked << " messages name the wrong level, e.g.:" << report;
}

TEST(ValidateTest, NamesTheDocumentedExample) {
  const auto why = refusal(request(OpKind::bit_xor, DType::int32, FeatureLevel(3, 0), Shape{4}));
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "xor: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)");
}

TEST(ValidateTest, OpsAreRefusedBeforeTheirIntroduction) {
  for (const OpInfo& info : op_table()) {
    const OpKind op = info.kind;
    const int introduced = doc_introduced(info.verb);
    const FeatureLevel first(introduced >> 12, (introduced >> 8) & 0xf);
    const auto before = std::find_if(feature_levels().rbegin(), feature_levels().rend(),
                                     [&](FeatureLevel l) { return l.value() < introduced; });
    ASSERT_NE(before, feature_levels().rend()) << info.verb;
    const FeatureLevel last_missing = *before;
    const Shape four{1, 2, 1, 3};  // fine for shifts at 2_1 too
    const auto why = refusal(request(op, DType::uint8, last_missing, four));
    ASSERT_TRUE(why) << op_info(op).verb;
    EXPECT_TRUE(contains(*why, op_info(op).dml_operator_name())) << *why;
    EXPECT_TRUE(
        contains(*why, "needs " + first.enum_name() + " or later (requested " + last_missing.short_name() + ")"))
        << *why;
    EXPECT_FALSE(refusal(request(op, DType::uint8, first, four))) << op_info(op).verb;
  }
}

// Issue #23 item 10: before the operator's first level, a data type that needs a later level
// still is what the message names, with the level it needs.
TEST(ValidateTest, NamesTheDataTypeBeforeTheOperatorsFirstLevel) {
  const Shape four{1, 2, 1, 3};
  auto why = refusal(request(OpKind::shl, DType::uint64, FeatureLevel(1, 0), four));
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "shl: data type UINT64 needs DML_FEATURE_LEVEL_4_1 or later (requested 1_0)");
  why = refusal(request(OpKind::bit_and, DType::int32, FeatureLevel(2, 1), Shape{4}));
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "and: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 2_1)");
  why = refusal(request(OpKind::popcount, DType::uint64, FeatureLevel(1, 0), Shape{4}));
  ASSERT_TRUE(why);
  EXPECT_EQ(*why, "popcount: data type UINT64 needs DML_FEATURE_LEVEL_4_1 or later (requested 1_0)");
}

TEST(ValidateTest, ShiftsAt2_1TakeExactlyFourDimensions) {
  for (OpKind op : {OpKind::shl, OpKind::shr}) {
    EXPECT_FALSE(refusal(request(op, DType::uint32, FeatureLevel(2, 1), Shape{2, 1, 3, 2})));
    const auto why = refusal(request(op, DType::uint32, FeatureLevel(2, 1), Shape{2, 3, 2}));
    ASSERT_TRUE(why);
    EXPECT_TRUE(contains(*why, "3 dimensions need DML_FEATURE_LEVEL_3_0 or later (requested 2_1)")) << *why;
    EXPECT_FALSE(refusal(request(op, DType::uint32, FeatureLevel(3, 0), Shape{2, 3, 2})));
  }
  // The broadcast result's rank is what counts: (2,1,3,2) with (2,) is 4-d.
  OpRequest r = request(OpKind::shl, DType::uint16, FeatureLevel(2, 1), Shape{2, 1, 3, 2});
  r.inputs[1].shape = Shape{2};
  EXPECT_FALSE(refusal(r));
  r.inputs[0].shape = Shape{3, 2};
  EXPECT_TRUE(refusal(r));
}

TEST(ValidateTest, RefusesInputsOfDifferentTypes) {
  OpRequest r = request(OpKind::bit_and, DType::uint8, FeatureLevel(6, 4), Shape{3});
  r.inputs[1].dtype = DType::uint16;
  const auto why = refusal(r);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "and: ")) << *why;
  EXPECT_TRUE(contains(*why, "UINT8") && contains(*why, "UINT16")) << *why;
  // Same width, different type: still refused (DirectML requires one DataType).
  r.inputs[1].dtype = DType::int8;
  EXPECT_TRUE(refusal(r));
  r.inputs[0].dtype = DType::float32;
  r.inputs[1].dtype = DType::uint32;
  EXPECT_TRUE(refusal(r));
}

TEST(ValidateTest, RefusesIncompatibleBroadcastNamingBothShapes) {
  OpRequest r = request(OpKind::bit_or, DType::uint32, FeatureLevel(6, 4), Shape{2, 3});
  r.inputs[1].shape = Shape{4};
  auto why = refusal(r);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "(2, 3)") && contains(*why, "(4,)")) << *why;
  r.inputs[0].shape = Shape{0};
  r.inputs[1].shape = Shape{2};
  why = refusal(r);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "(0,)") && contains(*why, "(2,)")) << *why;
}

TEST(ValidateTest, AcceptedOpsCarryTheBroadcastShapeAndTypes) {
  OpRequest r = request(OpKind::shr, DType::uint64, FeatureLevel(4, 1), Shape{3, 1});
  r.inputs[1].shape = Shape{1, 4};
  r.shift_overflow = ShiftOverflow::wrap;
  const ValidatedOp v = validate(r);
  EXPECT_EQ(v.output_shape(), (Shape{3, 4}));
  EXPECT_EQ(v.input_dtype(), DType::uint64);
  EXPECT_EQ(v.output_dtype(), DType::uint64);
  EXPECT_EQ(v.level(), FeatureLevel(4, 1));
  EXPECT_EQ(v.shift_overflow(), ShiftOverflow::wrap);
  ASSERT_EQ(v.input_shapes().size(), 2u);
  EXPECT_EQ(v.input_shapes()[1], (Shape{1, 4}));
  EXPECT_FALSE(v.desc().empty);

  const ValidatedOp e = validate(request(OpKind::bit_not, DType::float16, FeatureLevel(6, 4), Shape{2, 0}));
  EXPECT_TRUE(e.desc().empty);
  EXPECT_EQ(e.output_shape(), (Shape{2, 0}));
}

TEST(ValidateTest, PopcountOutputIsUint8ByDefaultAndOnlyUint8OrUint32) {
  for (FeatureLevel level : {FeatureLevel(3, 0), FeatureLevel(4, 1), FeatureLevel(6, 4)}) {
    OpRequest r = request(OpKind::popcount, DType::uint16, level, Shape{5});
    EXPECT_EQ(validate(r).output_dtype(), DType::uint8);
    for (const DTypeInfo& out : dtype_table()) {
      r.out_dtype = out.dtype;
      const bool want = out.dml_name == "UINT8" || out.dml_name == "UINT32";
      const auto why = refusal(r);
      EXPECT_EQ(!why, want) << out.dml_name << " at " << level.short_name() << (why ? ": " + *why : "");
      if (why) {
        EXPECT_TRUE(contains(*why, "output data type " + std::string(out.dml_name))) << *why;
      } else {
        EXPECT_EQ(validate(r).output_dtype(), out.dtype);
      }
    }
  }
  // A signed or float input still counts into UINT8/UINT32 (at 4_1).
  OpRequest r = request(OpKind::popcount, DType::float64, FeatureLevel(4, 1), Shape{2});
  r.out_dtype = DType::uint32;
  EXPECT_EQ(validate(r).output_dtype(), DType::uint32);
  r.out_dtype = DType::float64;
  EXPECT_TRUE(refusal(r));
}

TEST(ValidateTest, OnlyPopcountChoosesItsOutputType) {
  OpRequest r = request(OpKind::bit_xor, DType::uint8, FeatureLevel(6, 4), Shape{3});
  r.out_dtype = DType::uint32;
  EXPECT_TRUE(refusal(r));
  r.out_dtype = DType::uint8;
  EXPECT_FALSE(refusal(r));
}

TEST(ValidateTest, InPlaceOnlyWhereDirectMLAllowsItAndANeedsNoBroadcast) {
  OpRequest r = request(OpKind::popcount, DType::uint8, FeatureLevel(6, 4), Shape{4});
  r.in_place = true;
  auto why = refusal(r);
  ASSERT_TRUE(why);
  EXPECT_TRUE(contains(*why, "popcount: ")) << *why;

  for (const OpInfo& info : op_table()) {
    if (info.arity != 2) continue;
    const OpKind op = info.kind;
    OpRequest b = request(op, DType::uint8, FeatureLevel(6, 4), Shape{2, 3});
    b.in_place = true;
    b.inputs[1].shape = Shape{3};  // B broadcasts: the result has A's shape
    EXPECT_TRUE(validate(b).in_place()) << op_info(op).verb;
    std::swap(b.inputs[0].shape, b.inputs[1].shape);  // A would be broadcast
    why = refusal(b);
    ASSERT_TRUE(why) << op_info(op).verb;
    EXPECT_TRUE(contains(*why, "(3,)") && contains(*why, "(2, 3)")) << *why;
  }
  OpRequest scalar = request(OpKind::bit_and, DType::uint8, FeatureLevel(6, 4), Shape{});
  scalar.inputs[1].shape = Shape{5};
  scalar.in_place = true;
  EXPECT_TRUE(refusal(scalar));
  // Same shape after broadcasting but A has fewer dims: (3,) with (1, 3) is (1, 3).
  scalar.inputs[0].shape = Shape{3};
  scalar.inputs[1].shape = Shape{1, 3};
  EXPECT_TRUE(refusal(scalar));

  OpRequest n = request(OpKind::bit_not, DType::int16, FeatureLevel(6, 4), Shape{4});
  n.in_place = true;
  EXPECT_TRUE(validate(n).in_place());
}

}  // namespace
}  // namespace dmlbits
