// Bit-exact comparison (dmlbits/check.hpp): what compare_tensors counts and lists (bits, not
// values: NaN payloads and the sign of zero count), the text and JSON reports, and
// check_golden's outcomes with and without --update. Every expected value is worked out by hand.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compare.hpp"
#include "dmlbits/check.hpp"
#include "dmlbits/error.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

Tensor make(DType dtype, Shape shape, const std::vector<std::uint64_t>& bits) {
  Tensor t(dtype, std::move(shape));
  for (std::size_t i = 0; i < bits.size(); ++i) t.set_bits_at(i, bits[i]);
  return t;
}

std::string spaces(std::size_t n) { return std::string(n, ' '); }

TEST(CompareTensorsTest, EqualTensorsCountTheirElements) {
  const Tensor a = make(DType::uint16, Shape{2, 2}, {1, 2, 3, 0xffff});
  const CompareReport r = compare_tensors(a.view(), a.view(), 10);
  EXPECT_TRUE(r.equal());
  EXPECT_EQ(r.elements, 4u);
  EXPECT_EQ(r.differing, 0u);
  EXPECT_TRUE(r.listed.empty());
  EXPECT_EQ(compare_text(r, "'g.npy'"), "match with 'g.npy': 4 elements identical\n");
}

TEST(CompareTensorsTest, DtypeAndShapeDifferencesComeFirst) {
  const Tensor u8 = make(DType::uint8, Shape{2}, {1, 2});
  const Tensor u16 = make(DType::uint16, Shape{2}, {1, 2});
  const Tensor u8x3 = make(DType::uint8, Shape{1, 2}, {1, 2});
  CompareReport r = compare_tensors(u8.view(), u16.view(), 10);
  EXPECT_FALSE(r.equal());
  EXPECT_TRUE(r.dtype_differs);
  EXPECT_EQ(r.elements, 0u);
  EXPECT_EQ(compare_text(r, "L"), "mismatch with L: dtype differs: expected UINT8, got UINT16\n");
  r = compare_tensors(u8.view(), u8x3.view(), 10);
  EXPECT_TRUE(r.shape_differs);
  EXPECT_FALSE(r.dtype_differs);
  EXPECT_EQ(r.elements, 0u);
  EXPECT_EQ(compare_text(r, "L"), "mismatch with L: shape differs: expected (2,), got (1, 2)\n");
}

TEST(CompareTensorsTest, BitsNotValuesAreCompared) {
  // float32: 0.0 is 0x00000000 and -0.0 0x80000000 (equal as values, not as bits); the quiet
  // NaN 0x7fc00000 equals itself but not 0x7fc00001.
  const Tensor e = make(DType::float32, Shape{3}, {0x00000000, 0x7fc00000, 0x7fc00000});
  const Tensor a = make(DType::float32, Shape{3}, {0x80000000, 0x7fc00000, 0x7fc00001});
  const CompareReport r = compare_tensors(e.view(), a.view(), 10);
  EXPECT_EQ(r.differing, 2u);
  ASSERT_EQ(r.listed.size(), 2u);
  EXPECT_EQ(r.listed[0].flat_index, 0u);
  EXPECT_EQ(r.listed[0].actual, 0x80000000u);
  EXPECT_EQ(r.listed[1].flat_index, 2u);
  EXPECT_EQ(r.listed[1].expected, 0x7fc00000u);
  EXPECT_EQ(r.listed[1].actual, 0x7fc00001u);
  // A NaN is shown by its bits alone (JSON writes it as a hex string), not "x (0x...)".
  const std::string text = compare_text(r, "L");
  EXPECT_NE(text.find(" 0x7fc00001  0x00000001 (1 bit)\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("(0x7fc00001)"), std::string::npos) << text;
  EXPECT_NE(text.find("-0.0 (0x80000000)"), std::string::npos) << text;
}

TEST(CompareTensorsTest, ListsTheFirstDifferencesWithTheirIndices) {
  // Shape (2, 3): flat index 4 is [1, 1] and 5 is [1, 2].
  const Tensor e = make(DType::uint8, Shape{2, 3}, {0, 1, 2, 3, 4, 5});
  const Tensor a = make(DType::uint8, Shape{2, 3}, {0, 1, 2, 3, 0xff, 0x85});
  CompareReport r = compare_tensors(e.view(), a.view(), 1);
  EXPECT_EQ(r.elements, 6u);
  EXPECT_EQ(r.differing, 2u);
  ASSERT_EQ(r.listed.size(), 1u);
  EXPECT_EQ(r.listed[0].flat_index, 4u);
  EXPECT_EQ(r.listed[0].index, (std::vector<std::uint64_t>{1, 1}));
  r = compare_tensors(e.view(), a.view(), 10);
  ASSERT_EQ(r.listed.size(), 2u);
  EXPECT_EQ(r.listed[1].index, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(r.listed[1].expected, 5u);
  EXPECT_EQ(r.listed[1].actual, 0x85u);
}

// Differences on both sides of the 64 KiB block the comparison skips with memcmp.
TEST(CompareTensorsTest, FindsDifferencesAcrossBlocks) {
  const std::size_t n = 70000;
  Tensor e(DType::uint8, Shape{7, 10000});
  std::memset(e.data(), 0x11, n);
  Tensor a(DType::uint8, Shape{7, 10000});
  std::memset(a.data(), 0x11, n);
  for (std::size_t i : {std::size_t{0}, std::size_t{65535}, std::size_t{65536}, n - 1}) a.set_bits_at(i, 0x10);
  const CompareReport r = compare_tensors(e.view(), a.view(), 10);
  EXPECT_EQ(r.differing, 4u);
  ASSERT_EQ(r.listed.size(), 4u);
  EXPECT_EQ(r.listed[1].flat_index, 65535u);
  EXPECT_EQ(r.listed[1].index, (std::vector<std::uint64_t>{6, 5535}));
  EXPECT_EQ(r.listed[2].index, (std::vector<std::uint64_t>{6, 5536}));
  EXPECT_EQ(r.listed[3].index, (std::vector<std::uint64_t>{6, 9999}));
}

TEST(CompareTextTest, ATableOfTheShownDifferences) {
  // 13 = 0x0d against 12 = 0x0c differ in bit 0; 3 = 0x03 against 252 = 0xfc in all eight.
  const Tensor e = make(DType::uint8, Shape{3}, {13, 7, 3});
  const Tensor a = make(DType::uint8, Shape{3}, {12, 7, 252});
  const CompareReport r = compare_tensors(e.view(), a.view(), 10);
  const std::string header =
      "  index" + spaces(15) + " " + spaces(16) + "expected" + " " + spaces(18) + "actual" + "  differing bits (xor)\n";
  const std::string row0 =
      "  [0]" + spaces(17) + " " + spaces(15) + "13 (0x0d)" + " " + spaces(15) + "12 (0x0c)" + "  0x01 (1 bit)\n";
  const std::string row2 =
      "  [2]" + spaces(17) + " " + spaces(16) + "3 (0x03)" + " " + spaces(14) + "252 (0xfc)" + "  0xff (8 bits)\n";
  EXPECT_EQ(compare_text(r, "'g.npy'"),
            "mismatch with 'g.npy': 2 of 3 elements differ (UINT8)\n" + header + row0 + row2);
  EXPECT_EQ(compare_text(r, "'g.npy'", 1),
            "mismatch with 'g.npy': 2 of 3 elements differ (UINT8)\n" + header + row0 + "  ... 1 more\n");
  // Issue #23 item 17: --show 0 prints the count alone, not a header over no rows.
  EXPECT_EQ(compare_text(r, "'g.npy'", 0), "mismatch with 'g.npy': 2 of 3 elements differ (UINT8)\n");
}

// Issue #23 item 14: one element is "1 element".
TEST(CompareTextTest, OneElementIsSingular) {
  const Tensor e = make(DType::uint8, Shape{1}, {1});
  const Tensor a = make(DType::uint8, Shape{1}, {2});
  EXPECT_EQ(compare_text(compare_tensors(e.view(), e.view(), 10), "'g.npy'"),
            "match with 'g.npy': 1 element identical\n");
  EXPECT_EQ(compare_text(compare_tensors(e.view(), a.view(), 10), "'g.npy'", 0),
            "mismatch with 'g.npy': 1 of 1 element differs (UINT8)\n");
}

TEST(CompareJsonTest, CarriesTheCountsAndEachMismatch) {
  const Tensor e = make(DType::int8, Shape{2}, {0x01, 0xff});
  const Tensor a = make(DType::int8, Shape{2}, {0x01, 0x7f});
  const nlohmann::json j = compare_json(compare_tensors(e.view(), a.view(), 10));
  EXPECT_EQ(j["equal"], false);
  EXPECT_EQ(j["elements"], 2);
  EXPECT_EQ(j["differing"], 1);
  EXPECT_EQ(j["expected"]["dtype"], "int8");
  EXPECT_EQ(j["actual"]["shape"], nlohmann::json::array({2}));
  ASSERT_EQ(j["mismatches"].size(), 1u);
  const auto& m = j["mismatches"][0];
  EXPECT_EQ(m["index"], nlohmann::json::array({1}));
  // int8 0xff is -1 and 0x7f is 127; they differ in the sign bit.
  EXPECT_EQ(m["expected"], -1);
  EXPECT_EQ(m["actual"], 127);
  EXPECT_EQ(m["expected_hex"], "0xff");
  EXPECT_EQ(m["actual_hex"], "0x7f");
  EXPECT_EQ(m["xor_hex"], "0x80");
}

class CheckGoldenTest : public ::testing::Test {
 protected:
  test::TempDir dir_{"compare-test"};
  Tensor actual_ = make(DType::uint8, Shape{2}, {0xF0, 0x0F});
};

TEST_F(CheckGoldenTest, MatchesAndDiffersWithoutWriting) {
  test::write_file(dir_.file("g.npy"), test::npy_header_v1("|u1", "(2,)") + std::string("\xf0\x0f", 2));
  GoldenCheck g = check_golden(actual_.view(), dir_.file("g.npy"), 10, false);
  EXPECT_EQ(g.outcome, GoldenCheck::Outcome::matched);
  EXPECT_TRUE(g.report.equal());
  test::write_file(dir_.file("g.json"), R"({"dtype": "uint8", "data": [240, 14]})");
  g = check_golden(actual_.view(), dir_.file("g.json"), 10, false);
  EXPECT_EQ(g.outcome, GoldenCheck::Outcome::differed);
  EXPECT_EQ(g.report.differing, 1u);
  EXPECT_EQ(test::read_file(dir_.file("g.json")), R"({"dtype": "uint8", "data": [240, 14]})");
}

TEST_F(CheckGoldenTest, UnreadableGoldensThrowUnlessUpdating) {
  try {
    check_golden(actual_.view(), dir_.file("missing.npy"), 10, false);
    ADD_FAILURE() << "a missing golden matched";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io);
    EXPECT_EQ(std::string(e.what()).rfind("reading '" + dir_.file("missing.npy") + "': ", 0), 0u) << e.what();
  }
  // JSON without a dtype: --dtype gives inputs theirs, never a golden.
  test::write_file(dir_.file("nodtype.json"), "[240, 15]");
  try {
    check_golden(actual_.view(), dir_.file("nodtype.json"), 10, false);
    ADD_FAILURE() << "a golden without a dtype was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input);
    EXPECT_NE(std::string(e.what()).find("a golden file must name its data type"), std::string::npos) << e.what();
  }
  const GoldenCheck g = check_golden(actual_.view(), dir_.file("nodtype.json"), 10, true);
  EXPECT_EQ(g.outcome, GoldenCheck::Outcome::updated);
  EXPECT_FALSE(g.created);
}

TEST_F(CheckGoldenTest, UpdateWritesInTheGoldensFormat) {
  // A new file without a known extension is .npy.
  GoldenCheck g = check_golden(actual_.view(), dir_.file("golden"), 10, true);
  EXPECT_EQ(g.outcome, GoldenCheck::Outcome::updated);
  EXPECT_TRUE(g.created);
  const std::string npy = test::read_file(dir_.file("golden"));
  EXPECT_EQ(npy.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(test::npy_data(npy), std::string("\xf0\x0f", 2));
  // A new .json file is JSON, and reads back equal.
  g = check_golden(actual_.view(), dir_.file("new.json"), 10, true);
  EXPECT_TRUE(g.created);
  EXPECT_EQ(check_golden(actual_.view(), dir_.file("new.json"), 10, false).outcome, GoldenCheck::Outcome::matched);
  // An existing golden keeps its format even against its extension: .npy content named .json.
  test::write_file(dir_.file("odd.json"), test::npy_header_v1("|u1", "(2,)") + std::string("\x00\x00", 2));
  g = check_golden(actual_.view(), dir_.file("odd.json"), 10, true);
  EXPECT_EQ(g.outcome, GoldenCheck::Outcome::updated);
  EXPECT_FALSE(g.created);
  EXPECT_EQ(g.report.differing, 2u);
  EXPECT_EQ(test::read_file(dir_.file("odd.json")).substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"golden", "new.json", "odd.json"}));
}

}  // namespace
}  // namespace dmlbits
