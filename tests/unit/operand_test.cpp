// Operands (operand.hpp): classification, and LoadedOperand::chunk, the one way a chunked
// run reads an operand. The chunk of an operand must be its own elements [first, first + count)
// whatever it holds: a stream (little-endian C-order .npy), a tensor converted in memory
// (big-endian, Fortran order, JSON), or one broadcast element. Expected values are the element
// indices the files were written with.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dmlbits/error.hpp"
#include "operand.hpp"

namespace dmlbits {
namespace {

namespace fs = std::filesystem;

class OperandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fs::path("dmlbits-operand-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // A version 1.0 .npy of uint32 elements 0..n-1 (in C order) as `descr` and `fortran` say.
  std::string npy_u32(const std::string& name, std::uint32_t rows, std::uint32_t cols, bool big_endian, bool fortran) {
    std::string dict = "{'descr': '" + std::string(big_endian ? ">u4" : "<u4") +
                       "', 'fortran_order': " + (fortran ? "True" : "False") + ", 'shape': (" + std::to_string(rows) +
                       ", " + std::to_string(cols) + "), }";
    dict += std::string((64 - (10 + dict.size() + 1) % 64) % 64, ' ') + "\n";
    std::string out = std::string("\x93NUMPY\x01\x00", 8);
    out += static_cast<char>(dict.size() & 0xff);
    out += static_cast<char>(dict.size() >> 8);
    out += dict;
    for (std::uint32_t k = 0; k < rows * cols; ++k) {
      // Fortran order stores column by column: the k-th stored element is (k % rows, k / rows).
      const std::uint32_t value = fortran ? (k % rows) * cols + k / rows : k;
      for (int b = 0; b < 4; ++b) out += static_cast<char>(value >> (8 * (big_endian ? 3 - b : b)));
    }
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << out;
    return path;
  }

  fs::path dir_;
};

std::vector<std::uint32_t> values(std::span<const std::byte> bytes) {
  std::vector<std::uint32_t> v(bytes.size() / 4);
  std::memcpy(v.data(), bytes.data(), v.size() * 4);
  return v;
}

std::vector<std::uint32_t> iota(std::uint32_t first, std::uint32_t count) {
  std::vector<std::uint32_t> v(count);
  for (std::uint32_t i = 0; i < count; ++i) v[i] = first + i;
  return v;
}

TEST(OperandKindTest, ClassifiesLiteralsFilesAndStandardInput) {
  EXPECT_EQ(classify_operand("-"), OperandKind::standard_input);
  EXPECT_EQ(classify_operand("0x1f"), OperandKind::scalar_literal);
  EXPECT_EQ(classify_operand("-7"), OperandKind::scalar_literal);
  EXPECT_EQ(classify_operand("[1, 2]"), OperandKind::array_literal);
  EXPECT_EQ(classify_operand("a.npy"), OperandKind::file);
  EXPECT_EQ(classify_operand("1.5"), OperandKind::file);
}

// Every layout gives the same chunks: the bug this guards against read every chunk of an
// operand held in memory from its start.
TEST_F(OperandTest, ChunksOfEveryLayoutAreTheOperandsOwnElements) {
  struct Layout {
    const char* name;
    bool big_endian, fortran;
  };
  for (const Layout& l : {Layout{"le_c", false, false}, Layout{"be_c", true, false}, Layout{"le_f", false, true},
                          Layout{"be_f", true, true}}) {
    for (LoadMode mode : {LoadMode::streams, LoadMode::whole}) {
      SCOPED_TRACE(std::string(l.name) + (mode == LoadMode::streams ? " streams" : " whole"));
      const std::string path = npy_u32(std::string(l.name) + ".npy", 7, 11, l.big_endian, l.fortran);
      auto ops = load_operands(std::vector<std::string>{path}, std::nullopt, mode);
      ASSERT_EQ(ops.size(), 1u);
      // Only little-endian C order is left as a stream, and only when streams are asked for.
      EXPECT_EQ(ops[0].chunk_needs_scratch(), mode == LoadMode::streams && !l.big_endian && !l.fortran);
      std::vector<std::byte> scratch(77 * 4);
      for (std::uint64_t first : {0, 5, 30, 70}) {
        const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(7, 77 - first));
        EXPECT_EQ(values(ops[0].chunk(first, count, scratch.data())),
                  iota(static_cast<std::uint32_t>(first), static_cast<std::uint32_t>(count)))
            << "first " << first;
      }
    }
  }
}

TEST_F(OperandTest, JsonAndLiteralOperandsChunkLikeFiles) {
  auto ops = load_operands(std::vector<std::string>{"[[0, 1, 2], [3, 4, 5]]", "9"}, DType::uint32);
  EXPECT_EQ(values(ops[0].chunk(2, 3, nullptr)), iota(2, 3));
  // One element is broadcast: its chunk is that element wherever the chunk starts.
  EXPECT_EQ(values(ops[1].chunk(4, 2, nullptr)), std::vector<std::uint32_t>{9});
}

TEST_F(OperandTest, ChunkPastTheEndIsAnInternalError) {
  auto ops = load_operands(std::vector<std::string>{"[0, 1, 2]"}, DType::uint32);
  try {
    ops[0].chunk(2, 2, nullptr);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal);
  }
}

}  // namespace
}  // namespace dmlbits
