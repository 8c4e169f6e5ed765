// Replays inputs through the fuzz targets' logic (tests/fuzz/targets.hpp) without libFuzzer or
// clang: every file in testdata/fuzz-regressions/<target>/ (inputs the fuzzers found, each a bug
// since fixed), plus the fuzzers' seeds (testdata's .npy and JSON fixtures, literals, names, and
// a sweep of operations). A target throws Finding when an invariant breaks (a JSON tensor that
// does not round-trip, a backend that differs from the reference, ...) and lets any exception
// other than the expected dmlbits::Error escape; either fails the test, naming the input. The
// sanitizer build (DMLBITS_SANITIZE) also reports memory errors on these inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../fuzz/targets.hpp"

namespace dmlbits {
namespace {

namespace fs = std::filesystem;
using fuzz::Input;

const fs::path kTestdata = DMLBITS_TESTDATA_DIR;

struct Case {
  std::string name;
  std::vector<std::uint8_t> bytes;
};

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::uint8_t> text_bytes(std::string_view s) { return {s.begin(), s.end()}; }

// Regular files under `dir` (recursively) whose name ends in `suffix`, sorted.
std::vector<fs::path> files_under(const fs::path& dir, std::string_view suffix = "") {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string().ends_with(suffix)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Case> regressions(const std::string& target) {
  std::vector<Case> cases;
  for (const auto& p : files_under(kTestdata / "fuzz-regressions" / target))
    cases.push_back({"regression " + p.filename().string(), read_file(p)});
  return cases;
}

template <class Target>
void replay(Target&& target, const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    try {
      target(Input(c.bytes.data(), c.bytes.size()));
    } catch (const fuzz::Finding& f) {
      ADD_FAILURE() << c.name << ": " << f.what();
    } catch (const Error& e) {
      ADD_FAILURE() << c.name << ": dmlbits::Error escaped the target (" << errc_info(e.code()).name
                    << "): " << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.name << ": unexpected exception: " << e.what();
    }
  }
}

TEST(FuzzRegressionTest, NpyInputs) {
  std::vector<Case> cases = regressions("fuzz_npy");
  std::size_t seeds = 0;
  for (const auto& dir : {kTestdata / "npy", kTestdata / "examples"})
    for (const auto& p : files_under(dir, ".npy")) {
      cases.push_back({p.string(), read_file(p)});
      ++seeds;
    }
  ASSERT_GT(seeds, 50u) << "the .npy fixtures are missing";
  replay(fuzz::npy_target, cases);
}

TEST(FuzzRegressionTest, JsonTensorInputs) {
  std::vector<Case> cases = regressions("fuzz_json_tensor");
  const auto fixtures = files_under(kTestdata / "json", ".json");
  ASSERT_GT(fixtures.size(), 10u) << "the JSON fixtures are missing";
  // The first byte picks the fallback dtype, as the fuzzer's seeds do: every fixture with every dtype.
  for (const auto& p : fixtures)
    for (std::uint8_t k = 0; k < kDTypeCount; ++k) {
      std::vector<std::uint8_t> bytes{k};
      const auto text = read_file(p);
      bytes.insert(bytes.end(), text.begin(), text.end());
      cases.push_back({p.string() + " fallback " + std::string(dtype_info(static_cast<DType>(k)).numpy_name), bytes});
    }
  replay(fuzz::json_tensor_target, cases);
}

TEST(FuzzRegressionTest, LiteralInputs) {
  std::vector<Case> cases = regressions("fuzz_literal");
  for (const char* lit : {"0",
                          "255",
                          "256",
                          "-1",
                          "-128",
                          "-0",
                          "007",
                          "0x1ff",
                          "0XFF",
                          "0b101",
                          "-0x1",
                          "-0b1",
                          "1.5",
                          "-0.0",
                          "1e-05",
                          "nan",
                          "-nan",
                          "inf",
                          "-inf",
                          "Infinity",
                          "1e400",
                          "65504",
                          "65520",
                          "6.1e-05",
                          "5.96e-08",
                          "1e-45",
                          "3.4028235e+38",
                          "5e-324",
                          "18446744073709551615",
                          "18446744073709551616",
                          "-9223372036854775808",
                          "-9223372036854775809",
                          "0xffffffffffffffff",
                          "0x10000000000000000",
                          "[1,2]",
                          "-",
                          "",
                          "./a.npy"})
    cases.push_back({std::string("literal '") + lit + "'", text_bytes(lit)});
  replay(fuzz::literal_target, cases);
}

TEST(FuzzRegressionTest, NameInputs) {
  std::vector<Case> cases = regressions("fuzz_names");
  for (const char* name : {"1_0",
                           "2.1",
                           "4_1",
                           "4.1",
                           "4_2",
                           "6_4",
                           "6.5",
                           "DML_FEATURE_LEVEL_5_2",
                           "DML_FEATURE_LEVEL_5.2",
                           "uint8",
                           "u1",
                           "<u4",
                           "=i2",
                           "|u1",
                           ">f8",
                           "u3",
                           "UINT8",
                           "uint",
                           "DML_TENSOR_DATA_TYPE_FLOAT16",
                           "DML_TENSOR_DATA_TYPE_f2",
                           "and",
                           "bit-and",
                           "BIT_AND",
                           "DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_LEFT",
                           "popcount",
                           "BIT_COUNT",
                           "shr",
                           "scalar",
                           "avx2",
                           "avx512",
                           "npy",
                           "json",
                           ""})
    cases.push_back({std::string("name '") + name + "'", text_bytes(name)});
  replay(fuzz::names_target, cases);
}

TEST(FuzzRegressionTest, ExpressionInputs) {
  std::vector<Case> cases = regressions("fuzz_expression");
  // The fuzzer's seeds: one expression a line.
  std::ifstream seeds(kTestdata / "expressions" / "seeds.txt");
  std::size_t count = 0;
  for (std::string line; std::getline(seeds, line); ++count)
    cases.push_back({"expression '" + line + "'", text_bytes(line)});
  ASSERT_GT(count, 20u) << "testdata/expressions/seeds.txt is missing";
  // Past the limits, where a recursive parser would overflow its stack.
  cases.push_back({"60000 '('", text_bytes(std::string(60000, '('))});
  cases.push_back({"60000 '~'", text_bytes(std::string(60000, '~') + "a")});
  cases.push_back({"65 nested calls", text_bytes([] {
                     std::string s = "a";
                     for (int i = 0; i < 65; ++i) s = "not(" + s + ")";
                     return s;
                   }())});
  cases.push_back({"a list 60000 deep", text_bytes(std::string(30000, '[') + std::string(30000, ']'))});
  cases.push_back({"past the bytes limit", text_bytes("a" + std::string(expr::kMaxExpressionBytes, ' '))});
  replay(fuzz::expression_target, cases);
}

TEST(FuzzRegressionTest, OpInputs) {
  std::vector<Case> cases = regressions("fuzz_op");
  // A deterministic sweep in op_target's input layout: every operator and dtype at the newest
  // level with broadcasting shapes, shift counts near the width, popcount to UINT32, in place,
  // threads and misaligned buffers; then the same at 3_0 where most of it is refused.
  for (std::uint8_t op = 0; op < 7; ++op)
    for (std::uint8_t dtype = 0; dtype < kDTypeCount; ++dtype)
      for (std::uint8_t variant = 0; variant < 4; ++variant) {
        const std::uint8_t level = variant == 3 ? 3 : 14;  // 3_0 or 6_4 in feature_levels() order
        // Variant 1: wrap, popcount to UINT32, shift counts near the width, threads. Variant 2:
        // in place with 4-byte-misaligned buffers.
        const std::uint8_t flags = variant == 1 ? (op == 6 ? 0x35 : 0x31) : variant == 2 ? 0xc8 : 0x00;
        // A is (2, 33, 65); B is (33, 1), or (1, 33, 1) in place so that A has the output's shape.
        std::vector<std::uint8_t> bytes{op, dtype, level, flags, 0, 0x23, 3, 14, 15, 0, 14, 0, 0, 0};
        if (variant == 2) {
          bytes[5] = 0x33;
          bytes[10] = 0;
          bytes[11] = 14;
        }
        for (int i = 0; i < 97; ++i) bytes.push_back(static_cast<std::uint8_t>(i * 37 + op * 11 + dtype));
        cases.push_back({fmt::format("sweep op {} dtype {} variant {}", op, dtype, variant), bytes});
      }
  std::size_t ran = 0;
  replay([&](Input in) { ran += fuzz::op_target(in) ? 1 : 0; }, cases);
  // Most of the sweep is valid at 6_4; if validation refused it all, nothing was compared.
  EXPECT_GT(ran, 150u);
}

TEST(FuzzRegressionTest, RunInputs) {
  std::vector<Case> cases = regressions("fuzz_run");
  // A deterministic sweep in run_target's input layout: every operator with A in each of the 8
  // layouts, B in another layout and shape, sizes cycling through the four classes (small, the
  // stream chunk +-64, several chunks and an odd remainder, around 4 KiB pages), flags cycling
  // through wrap, popcount to UINT32, one thread, cpu-reference, lower ISAs and bool.
  for (std::uint8_t op = 0; op < 7; ++op)
    for (std::uint8_t layout = 0; layout < 8; ++layout) {
      const std::uint8_t dtype = static_cast<std::uint8_t>((op * 3 + layout) % 8);  // the integer types
      const std::uint8_t b = static_cast<std::uint8_t>(((layout + op + 3) % 8) | (((op + layout) % 4) << 3));
      const std::uint8_t size_class = static_cast<std::uint8_t>((layout + op) % 4 | ((op % 4) << 2));
      const std::uint8_t flags = static_cast<std::uint8_t>((layout * 5 + op * 3) % 64);
      std::vector<std::uint8_t> bytes{
          op,   dtype, layout, b, size_class, static_cast<std::uint8_t>(layout * 37), static_cast<std::uint8_t>(op),
          flags};
      for (int i = 0; i < 61; ++i) bytes.push_back(static_cast<std::uint8_t>(i * 53 + op * 7 + layout));
      cases.push_back({fmt::format("run sweep op {} layout {}", op, layout), bytes});
    }
  std::size_t ran = 0;
  replay([&](Input in) { ran += fuzz::run_target(in) ? 1 : 0; }, cases);
  EXPECT_GT(ran, 40u);
}

}  // namespace
}  // namespace dmlbits
