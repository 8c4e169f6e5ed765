// .npy inputs read in chunks (dmlbits/npy_stream.hpp): which files stream (C order, native byte
// order) and which are left to the whole-input reader (nullptr, with what a pipe already gave in
// `consumed`), reads at any offset of a regular file and in order from a pipe, and the errors:
// a size that disagrees with the header (before anything is read), a file that shrinks while
// read (Errc::io), a pipe that ends early or runs on (Errc::invalid_input). Files are written
// byte by byte here; expected values are the element indices they hold.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "dmlbits/error.hpp"
#include "npy_stream.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

using test::TempDir;

std::vector<std::uint16_t> ramp16(std::size_t n) {
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint16_t>(i * 3);
  return v;
}

std::vector<std::uint16_t> read16(NpyStream& s, std::uint64_t first, std::size_t count) {
  std::vector<std::uint16_t> v(count);
  s.read(first, count, reinterpret_cast<std::byte*>(v.data()));
  return v;
}

using test::error_of;

// Standard input from a pipe fed by a thread, for the length of the test.
class StdinPipe {
 public:
  explicit StdinPipe(std::string bytes) : bytes_(std::move(bytes)) {
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    saved_ = ::dup(STDIN_FILENO);
    ::dup2(fds[0], STDIN_FILENO);
    ::close(fds[0]);
    writer_ = std::thread([this, fd = fds[1]] {
      std::size_t off = 0;
      while (off < bytes_.size()) {
        const ssize_t w = ::write(fd, bytes_.data() + off, bytes_.size() - off);
        if (w <= 0) break;
        off += static_cast<std::size_t>(w);
      }
      ::close(fd);
    });
  }
  ~StdinPipe() {
    // Drain what the test left unread, so the writer can finish.
    char sink[4096];
    while (::read(STDIN_FILENO, sink, sizeof sink) > 0) {
    }
    writer_.join();
    ::dup2(saved_, STDIN_FILENO);
    ::close(saved_);
  }

 private:
  std::string bytes_;
  int saved_ = -1;
  std::thread writer_;
};

class NpyStreamTest : public ::testing::Test {
 protected:
  TempDir dir_{"npy-stream-test"};
};

TEST_F(NpyStreamTest, ARegularFileReadsAtAnyOffset) {
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp16(1000)));
  std::vector<std::byte> consumed;
  auto s = NpyStream::open(dir_.file("a.npy"), consumed);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(consumed.empty());
  EXPECT_EQ(s->path(), dir_.file("a.npy"));
  EXPECT_EQ(s->header().dtype, DType::uint16);
  EXPECT_EQ(s->header().shape, Shape({1000}));
  EXPECT_EQ(s->header().data_bytes, 2000u);
  // Out of order and overlapping: element i holds 3 * i.
  EXPECT_EQ(read16(*s, 998, 2), (std::vector<std::uint16_t>{2994, 2997}));
  EXPECT_EQ(read16(*s, 0, 3), (std::vector<std::uint16_t>{0, 3, 6}));
  EXPECT_EQ(read16(*s, 500, 1), (std::vector<std::uint16_t>{1500}));
  EXPECT_NO_THROW(s->finish());
  const Tensor all = s->read_all();
  EXPECT_EQ(all.element_count(), 1000u);
  EXPECT_EQ(all.bits_at(999), 2997u);
}

TEST_F(NpyStreamTest, OnlyCOrderNativeDataStreams) {
  // Big-endian data needs swapping; a 2-D Fortran array needs reordering.
  test::write_file(dir_.file("be.npy"), test::npy_header_v1(">u2", "(2,)") + std::string("\x00\x01\x00\x02", 4));
  std::string fortran = test::npy_header_v1("<u2", "(2, 2)");
  fortran.replace(fortran.find("False"), 5, "True ");
  test::write_file(dir_.file("f.npy"), fortran + std::string(8, '\0'));
  std::string fortran_1d = test::npy_header_v1("<u2", "(2,)");
  fortran_1d.replace(fortran_1d.find("False"), 5, "True ");
  test::write_file(dir_.file("f1.npy"), fortran_1d + std::string("\x07\x00\x09\x00", 4));
  test::write_file(dir_.file("a.json"), R"({"dtype": "uint8", "data": [1, 2, 3]})");
  std::vector<std::byte> consumed;
  EXPECT_EQ(NpyStream::open(dir_.file("be.npy"), consumed), nullptr);
  EXPECT_EQ(NpyStream::open(dir_.file("f.npy"), consumed), nullptr);
  EXPECT_EQ(NpyStream::open(dir_.file("a.json"), consumed), nullptr);
  // A one-dimensional Fortran array is laid out as in C order: it streams.
  auto s = NpyStream::open(dir_.file("f1.npy"), consumed);
  ASSERT_NE(s, nullptr);
  std::vector<std::uint16_t> v(2);
  s->read(0, 2, reinterpret_cast<std::byte*>(v.data()));
  EXPECT_EQ(v, (std::vector<std::uint16_t>{7, 9}));
}

TEST_F(NpyStreamTest, ASizeThatDisagreesWithTheHeaderIsRefusedAtOpen) {
  const std::string header = test::npy_header_v1("<u2", "(4,)");  // 8 bytes of data
  test::write_file(dir_.file("short.npy"), header + std::string(6, '\x01'));
  test::write_file(dir_.file("long.npy"), header + std::string(9, '\x01'));
  // Even a layout that would not stream is checked here, before anything is read whole.
  std::string be = test::npy_header_v1(">u2", "(4,)");
  test::write_file(dir_.file("be_short.npy"), be + std::string(2, '\x01'));
  std::vector<std::byte> consumed;
  Error e = error_of([&] { NpyStream::open(dir_.file("short.npy"), consumed); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_STREQ(e.what(), "truncated: expected 8 bytes of data, found 6");
  e = error_of([&] { NpyStream::open(dir_.file("long.npy"), consumed); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_STREQ(e.what(), "trailing garbage: expected 8 bytes of data, found 9");
  e = error_of([&] { NpyStream::open(dir_.file("be_short.npy"), consumed); });
  EXPECT_STREQ(e.what(), "truncated: expected 8 bytes of data, found 2");
}

TEST_F(NpyStreamTest, OpenErrorsAreIoErrors) {
  std::vector<std::byte> consumed;
  Error e = error_of([&] { NpyStream::open(dir_.file("missing.npy"), consumed); });
  EXPECT_EQ(e.code(), Errc::io);
  EXPECT_EQ(std::string(e.what()), "cannot open '" + dir_.file("missing.npy") + "': No such file or directory");
  e = error_of([&] { NpyStream::open(dir_.path().string(), consumed); });
  EXPECT_EQ(e.code(), Errc::io);
  EXPECT_STREQ(e.what(), "cannot read: Is a directory");
}

TEST_F(NpyStreamTest, AFileThatShrinksIsAnIoError) {
  const std::string header = test::npy_header_v1("<u2", "(1000,)");
  test::write_file(dir_.file("a.npy"), header + test::le_bytes(ramp16(1000)));
  std::vector<std::byte> consumed;
  auto s = NpyStream::open(dir_.file("a.npy"), consumed);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(read16(*s, 0, 2), (std::vector<std::uint16_t>{0, 3}));
  std::filesystem::resize_file(dir_.file("a.npy"), header.size() + 200);  // 100 elements left
  EXPECT_EQ(read16(*s, 99, 1), (std::vector<std::uint16_t>{297}));
  const Error e = error_of([&] { read16(*s, 90, 20); });
  EXPECT_EQ(e.code(), Errc::io);
  // Elements 90..99 were there: 180 + 20 = 200 bytes.
  EXPECT_EQ(std::string(e.what()),
            "reading '" + dir_.file("a.npy") + "': file shrank while reading: expected 2000 bytes of data, found 200");
}

TEST(NpyStreamPipeTest, APipeReadsInOrder) {
  StdinPipe in(test::npy_1d(ramp16(10)));
  std::vector<std::byte> consumed;
  auto s = NpyStream::open("-", consumed);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->path(), "-");
  EXPECT_EQ(read16(*s, 0, 4), (std::vector<std::uint16_t>{0, 3, 6, 9}));
  const Error e = error_of([&] { read16(*s, 6, 1); });  // skipping 4 and 5
  EXPECT_EQ(e.code(), Errc::internal);
  EXPECT_STREQ(e.what(), "a pipe must be read in order");
  EXPECT_EQ(read16(*s, 4, 6), (std::vector<std::uint16_t>{12, 15, 18, 21, 24, 27}));
  EXPECT_NO_THROW(s->finish());
}

TEST(NpyStreamPipeTest, APipeThatEndsEarlyIsTruncated) {
  StdinPipe in(test::npy_header_v1("<u2", "(10,)") + test::le_bytes(ramp16(7)));
  std::vector<std::byte> consumed;
  auto s = NpyStream::open("-", consumed);
  ASSERT_NE(s, nullptr);  // a pipe's length is not known at open
  EXPECT_EQ(read16(*s, 0, 5), (std::vector<std::uint16_t>{0, 3, 6, 9, 12}));
  const Error e = error_of([&] { read16(*s, 5, 5); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_STREQ(e.what(), "reading standard input: truncated: expected 20 bytes of data, found 14");
}

TEST(NpyStreamPipeTest, APipeThatRunsOnHasTrailingGarbage) {
  StdinPipe in(test::npy_1d(ramp16(3)) + "x");
  std::vector<std::byte> consumed;
  auto s = NpyStream::open("-", consumed);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(read16(*s, 0, 3), (std::vector<std::uint16_t>{0, 3, 6}));
  const Error e = error_of([&] { s->finish(); });
  EXPECT_EQ(e.code(), Errc::invalid_input);
  EXPECT_STREQ(e.what(), "reading standard input: trailing garbage after 6 bytes of data");
}

TEST(NpyStreamPipeTest, WhatAPipeGaveIsLeftInConsumed) {
  StdinPipe in(R"({"dtype": "uint8", "data": [1, 2, 3]})");
  std::vector<std::byte> consumed;
  EXPECT_EQ(NpyStream::open("-", consumed), nullptr);
  // The first 12 bytes, for the whole-input reader to continue from.
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(consumed.data()), consumed.size()), R"({"dtype": "u)");
}

}  // namespace
}  // namespace dmlbits
