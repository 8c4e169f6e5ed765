// Reading inputs (io.hpp, npy_stream.hpp): whole reads without memory mapping, the JSON
// bounds, inspect_input's header-only reading, and a file cut while it is streamed. Files are
// written here byte by byte; sizes are from the .npy format (10-byte prefix, 64-byte padding).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dmlbits/error.hpp"
#include "unit_support.hpp"
#include "io.hpp"
#include "json_tensor.hpp"
#include "npy.hpp"
#include "npy_stream.hpp"

namespace dmlbits {
namespace {

namespace fs = std::filesystem;

class IoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fs::path("dmlbits-io-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `content`, then extends the file to `size` bytes (sparse zeros) if larger.
  std::string file(const std::string& name, const std::string& content, std::uint64_t size = 0) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << content;
    if (size > content.size()) fs::resize_file(path, size);
    return path;
  }

  fs::path dir_;
};

// A version 1.0 header padded to 64 bytes, as NumPy writes one.
std::string npy_header_text(const std::string& descr, const std::string& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>(dict.size() >> 8);
  return out + dict;
}

using test::error_of;

TEST_F(IoTest, ReadsAFileWhole) {
  std::string content;
  for (int i = 0; i < 300000; ++i) content += static_cast<char>(i * 7);  // past the 4 KiB head
  const InputBytes in = InputBytes::open(file("a.bin", "[" + content));
  ASSERT_EQ(in.bytes().size(), content.size() + 1);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(in.bytes().data()) + 1, content.size()), content);
  EXPECT_TRUE(InputBytes::open(file("empty.json", "")).bytes().empty());
}

TEST_F(IoTest, RefusesJsonOverTheBoundFromTheFileSize) {
  // 10 GiB, sparse: refused before the data is read (reading it would take seconds and memory).
  const std::string path = file("big.json", "[0, ", std::uint64_t{10} << 30);
  const Error e = error_of([&] { read_tensor(path); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_EQ(std::string(e.what()), "reading '" + path +
                                       "': JSON input is limited to 64 MiB, and this file is 10 GiB: use .npy for "
                                       "larger tensors");
  // One byte over the bound is over; the bound itself is not refused for its size.
  const std::string over = file("over.json", "[0, ", kMaxJsonInputBytes + 1);
  EXPECT_EQ(error_of([&] { InputBytes::open(over); }).code(), Errc::invalid_input);
  const std::string at = file("at.json", "[0, ", kMaxJsonInputBytes);
  EXPECT_EQ(InputBytes::open(at).bytes().size(), kMaxJsonInputBytes);
}

TEST_F(IoTest, LargeNpyFilesAreNotBoundedLikeJson) {
  const std::string path = file("big.npy", npy_header_text("|u1", "(67108928,)"), 64 + 67108928);
  EXPECT_EQ(InputBytes::open(path).bytes().size(), 64u + 67108928u);
}

TEST_F(IoTest, LargeInputThatIsNotJsonSaysSo) {
  const std::string path = file("zeros.bin", "", std::uint64_t{1} << 30);
  EXPECT_NE(std::string(error_of([&] { InputBytes::open(path); }).what()).find("unrecognised format"),
            std::string::npos);
}

TEST(JsonBoundsTest, TextOverTheBoundIsRefusedBeforeParsing) {
  const std::string text(kMaxJsonInputBytes + 1, ' ');
  const Error e = error_of([&] { JsonTensorDocument::parse(text); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_NE(
      std::string(e.what()).find(
          "JSON input is limited to 64 MiB (67108864 bytes), and this text is 64.0 MiB (67108865 bytes): use .npy"),
      std::string::npos);
}

TEST_F(IoTest, InspectInputReadsTheHeaderAndChecksTheSize) {
  // 1 TiB promised, sparse on disk: inspect_input reads a header's worth, not the data.
  const std::string header = npy_header_text(">u4", "(274877906944,)");
  const std::string path = file("huge.npy", header, header.size() + (std::uint64_t{1} << 40));
  const InputSummary s = inspect_input(path);
  EXPECT_EQ(s.format, TensorFormat::npy);
  ASSERT_TRUE(s.npy);
  EXPECT_EQ(s.npy->shape, Shape{274877906944});
  EXPECT_EQ(s.npy->data_bytes, std::uint64_t{1} << 40);
  EXPECT_FALSE(s.json);

  const std::string short_path = file("short.npy", header + std::string(1000, '\0'));
  const Error e = error_of([&] { inspect_input(short_path); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_EQ(std::string(e.what()),
            "reading '" + short_path + "': truncated: expected 1099511627776 bytes of data, found 1000");
  const std::string long_path = file("long.npy", header + std::string(1000, '\0'));
  fs::resize_file(long_path, header.size() + (std::uint64_t{1} << 40) + 1);
  EXPECT_NE(std::string(error_of([&] { inspect_input(long_path); }).what()).find("trailing garbage"),
            std::string::npos);
  EXPECT_NE(
      std::string(error_of([&] { inspect_input(file("tiny.npy", "\x93NUMPY\x01")); }).what()).find("truncated header"),
      std::string::npos);
}

TEST_F(IoTest, InspectInputReadsJsonWhole) {
  const std::string text = "  {\"dtype\": \"uint8\", \"data\": [1, 2]}";
  const InputSummary s = inspect_input(file("a.json", text));
  EXPECT_EQ(s.format, TensorFormat::json);
  ASSERT_TRUE(s.json);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(s.json->bytes().data()), s.json->bytes().size()), text);
  EXPECT_FALSE(s.npy);
  const std::string big = file("big.json", "[", std::uint64_t{1} << 33);
  EXPECT_NE(std::string(error_of([&] { inspect_input(big); }).what())
                .find("reading '" + big + "': JSON input is limited to 64 MiB, and this file is 8 GiB: use .npy"),
            std::string::npos);
}

TEST_F(IoTest, StreamedFileThatShrinksIsAnIoError) {
  const std::string header = npy_header_text("|u1", "(1000000,)");
  const std::string path = file("a.npy", header, header.size() + 1000000);
  std::vector<std::byte> consumed;
  auto stream = NpyStream::open(path, consumed);
  ASSERT_TRUE(stream);
  std::vector<std::byte> buf(500000);
  stream->read(0, 500000, buf.data());
  fs::resize_file(path, header.size() + 600000);  // another program cuts the file
  const Error e = error_of([&] { stream->read(500000, 500000, buf.data()); });
  EXPECT_EQ(e.code(), Errc::io);
  EXPECT_EQ(std::string(e.what()),
            "reading '" + path + "': file shrank while reading: expected 1000000 bytes of data, found 600000");
}

TEST_F(IoTest, NonStreamableNpyIsCheckedAgainstItsSizeBeforeItIsRead) {
  // Big-endian data is read whole; a claim of 1 TiB in a small file is refused at open.
  const std::string path = file("be.npy", npy_header_text(">u4", "(274877906944,)") + std::string(1000, '\0'));
  std::vector<std::byte> consumed;
  const Error e = error_of([&] { NpyStream::open(path, consumed); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_NE(std::string(e.what()).find("truncated: expected 1099511627776 bytes of data, found 1000"),
            std::string::npos);
}

TEST_F(IoTest, OverlongHeaderIsRefusedFromItsLength) {
  std::string text("\x93NUMPY\x02\x00", 8);
  text += std::string("\x00\x00\x00\x40", 4);  // 1 GiB of header claimed
  const std::string path = file("long_header.npy", text, std::uint64_t{2} << 30);
  std::vector<std::byte> consumed;
  EXPECT_NE(std::string(error_of([&] { NpyStream::open(path, consumed); }).what()).find("header too long"),
            std::string::npos);
  EXPECT_NE(std::string(error_of([&] { inspect_input(path); }).what()).find("header too long"), std::string::npos);
  EXPECT_NE(std::string(error_of([&] { read_input(path); }).what()).find("header too long"), std::string::npos);
}

// A Fortran-order (rows, n) uint16 array, element c (C order) holding c & 0xffff, big-endian
// or not.
std::string fortran_u2(std::uint64_t rows, std::uint64_t n, bool big) {
  std::string data;
  for (std::uint64_t j = 0; j < n; ++j)
    for (std::uint64_t i = 0; i < rows; ++i) {
      const std::uint64_t v = (i * n + j) & 0xffff;
      data += static_cast<char>(big ? v >> 8 : v & 0xff);
      data += static_cast<char>(big ? v & 0xff : v >> 8);
    }
  std::string header =
      npy_header_text(big ? ">u2" : "<u2", "(" + std::to_string(rows) + ", " + std::to_string(n) + ")");
  header.replace(header.find("False"), 5, "True ");  // the same length: the padding still fits
  return header + data;
}

TEST_F(IoTest, ReadInputPutsNpyDataStraightIntoTheTensor) {
  // A tiny file, one piece of the decoder and several (4 MiB each), in both byte orders.
  for (const auto& [rows, n] : {std::pair<std::uint64_t, std::uint64_t>{2, 3}, {2, 600001}, {64, 100000}}) {
    for (const bool big : {false, true}) {
      const std::string content = fortran_u2(rows, n, big);
      const InputContent in = read_input(file("f.npy", content));
      ASSERT_EQ(in.format, TensorFormat::npy);
      ASSERT_TRUE(in.npy);
      EXPECT_TRUE(in.npy->fortran_order);
      EXPECT_FALSE(in.json);
      ASSERT_EQ(in.tensor.shape(), (Shape{rows, n}));
      for (std::uint64_t c = 0; c < rows * n; ++c)
        ASSERT_EQ(in.tensor.bits_at(c), c & 0xffff) << rows << "x" << n << " " << big << " " << c;
      EXPECT_EQ(read_tensor(file("f.npy", content)).tensor.byte_size(), 2 * rows * n);  // read_tensor too
    }
  }
}

TEST_F(IoTest, ReadInputReadsHeadersLongerThanItsFirstRead) {
  // 10000 bytes of padding: the header goes past the 4 KiB first read.
  std::string dict = "{'descr': '<u2', 'fortran_order': False, 'shape': (3,), }";
  dict.append(10000, ' ');
  dict.append(64 - (10 + dict.size() + 1) % 64, ' ');
  dict += '\n';
  std::string text("\x93NUMPY\x01\x00", 8);
  text += static_cast<char>(dict.size() & 0xff);
  text += static_cast<char>(dict.size() >> 8);
  const InputContent in = read_input(file("long.npy", text + dict + std::string("\x01\x00\x02\x00\x03\x00", 6)));
  ASSERT_EQ(in.tensor.element_count(), 3u);
  EXPECT_EQ(in.tensor.bits_at(2), 3u);
  EXPECT_EQ(std::string(error_of([&] { read_input(file("cut.npy", text + dict.substr(0, 5000))); }).what()),
            "truncated header: expected " + std::to_string(dict.size()) + " bytes, found 5000");
}

TEST_F(IoTest, ReadInputChecksTheDataSizeBeforeAllocating) {
  // 1 TiB promised by a 1000-byte file: refused from the file's size (allocating it would fail
  // differently, or take the machine's memory), in either byte order.
  for (const char* descr : {"<u4", ">u4"}) {
    std::string header = npy_header_text(descr, "(274877906944,)");
    const std::string path = file("huge.npy", header + std::string(1000, '\0'));
    const Error e = error_of([&] { read_input(path); });
    EXPECT_EQ(e.code(), Errc::invalid_input);
    EXPECT_EQ(std::string(e.what()), "truncated: expected 1099511627776 bytes of data, found 1000");
  }
  const std::string header = npy_header_text("|u1", "(100,)");
  EXPECT_EQ(std::string(error_of([&] { read_input(file("long.npy", header + std::string(101, '\0'))); }).what()),
            "trailing garbage: expected 100 bytes of data, found 101");
  EXPECT_EQ(std::string(error_of([&] { read_tensor(file("short.npy", header + std::string(99, '\0'))); }).what()),
            "reading '" + (dir_ / "short.npy").string() + "': truncated: expected 100 bytes of data, found 99");
}

TEST_F(IoTest, ReadInputGivesJsonAsText) {
  const InputContent in = read_input(file("a.json", "[1, 2]"));
  EXPECT_EQ(in.format, TensorFormat::json);
  ASSERT_TRUE(in.json);
  EXPECT_EQ(in.json->bytes().size(), 6u);
  EXPECT_FALSE(in.npy);
  EXPECT_EQ(std::string(error_of([&] { read_input(file("empty", "")); }).what()),
            "empty input (neither .npy nor JSON)");
  const std::string big = file("big.json", "[0, ", std::uint64_t{10} << 30);
  EXPECT_NE(std::string(error_of([&] { read_input(big); }).what()).find("JSON input is limited to 64 MiB"),
            std::string::npos);
}

}  // namespace
}  // namespace dmlbits
