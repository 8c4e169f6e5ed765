// Streamed runs (dmlbits/stream.hpp): stream_operation over several kStreamChunkBytes chunks
// must write, byte for byte, what run_operation computes in memory and what the test computes
// by hand, in chunk order whether reading and computing run on a second thread (the `pipelined`
// variant: threads = 2 with the pipeline's threshold lowered to nothing through StreamOptions,
// run_pipelined) or not (threads = 1, and threads = 2 at the product's 64 MiB threshold, which
// these files stay under); a failure mid-stream (an output that cannot be created,
// an input that shrinks or a pipe that ends after the first chunk, a progress callback that
// throws) must leave neither the output nor a temporary file, and an existing output as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "dmlbits/error.hpp"
#include "dmlbits/process.hpp"
#include "run.hpp"
#include "stream.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

using test::TempDir;

// uint32 elements per chunk: 512 KiB / 4 bytes.
constexpr std::uint64_t kChunk = 131072;
static_assert(kStreamChunkBytes == 524288, "the element counts below are worked out for 512 KiB chunks");

// Distinct values in every position, so that a chunk written twice, dropped or out of order shows.
std::vector<std::uint32_t> ramp(std::uint64_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(i);
  return v;
}

std::vector<std::uint32_t> scrambled(std::uint64_t n) {
  std::vector<std::uint32_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = static_cast<std::uint32_t>(i * 2654435761u) ^ 0x5a5a5a5au;
  return v;
}

OperationSpec spec_of(OpKind op, std::vector<std::string> operands, unsigned threads) {
  OperationSpec s;
  s.op = op;
  s.operands.assign(operands.begin(), operands.end());
  s.backend = test::kind("cpu");
  s.threads = threads;
  return s;
}

// The ways a StreamTest runs: threads, and the pipeline's threshold (StreamOptions).
struct StreamVariant {
  const char* name;
  unsigned threads;
  StreamOptions options;
};
// How gtest (and so ctest's test names) shows a variant.
void PrintTo(const StreamVariant& variant, std::ostream* os) { *os << variant.name; }
const StreamVariant kVariants[] = {
    {"threads1", 1, {}},
    {"threads2", 2, {}},
    {"pipelined", 2, StreamOptions{.pipeline_min_output_bytes = 0}},
};

std::string run_in_memory(const OperationSpec& spec) {
  const OperationResult r = run_operation(spec);
  const TensorView v = r.result();
  return {reinterpret_cast<const char*>(v.data), v.byte_size()};
}

class StreamTest : public ::testing::TestWithParam<StreamVariant> {
 protected:
  unsigned threads() const { return GetParam().threads; }
  StreamResult stream(const OperationSpec& spec, const std::string& out, const ProgressFn& progress,
                      const std::function<void(const ValidatedOp&, const RunTiming&)>& on_validated = {}) {
    return stream_operation(spec, out, progress, on_validated, GetParam().options);
  }
  // Whether a run's device description (RunTiming::device) says it was pipelined: two threads
  // used (a streamed run computes each 512 KiB chunk on one, so a second is the reader's).
  static bool says_pipelined(const std::string& device) {
    return device.find("1 of 2") == std::string::npos && device.find("2 threads") != std::string::npos;
  }
  bool pipelines() const {
    return std::string_view(GetParam().name) == "pipelined" && std::thread::hardware_concurrency() >= 2;
  }
  TempDir dir_{"stream-test"};
};

// Three full chunks and a partial one of two full-size inputs; the output's data is the
// elementwise xor, as run_operation and the loop below have it.
TEST_P(StreamTest, ChunksMatchTheInMemoryRunAndTheHandResult) {
  const std::uint64_t n = 3 * kChunk + 5;
  const auto a = ramp(n), b = scrambled(n);
  test::write_file(dir_.file("a.npy"), test::npy_1d(a));
  test::write_file(dir_.file("b.npy"), test::npy_1d(b));
  const OperationSpec spec = spec_of(OpKind::bit_xor, {dir_.file("a.npy"), dir_.file("b.npy")}, threads());

  std::vector<std::pair<std::uint64_t, std::uint64_t>> progress;
  const StreamResult r = stream(spec, dir_.file("out.npy"),
                                          [&](std::uint64_t done, std::uint64_t total) { progress.emplace_back(done, total); });
  EXPECT_TRUE(r.streamed);

  std::vector<std::uint32_t> expected(n);
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = a[i] ^ b[i];
  const std::string file = test::read_file(dir_.file("out.npy"));
  const std::string data = test::npy_data(file);
  ASSERT_EQ(data.size(), n * 4);
  EXPECT_EQ(data, test::le_bytes(expected));
  EXPECT_EQ(data, run_in_memory(spec));
  EXPECT_NE(file.find("'shape': (393221,)"), std::string::npos) << file.substr(0, 128);

  // Once per chunk, in order, on the calling thread's schedule: 3 * 131072 + 5 = 393221.
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> want{
      {131072, 393221}, {262144, 393221}, {393216, 393221}, {393221, 393221}};
  EXPECT_EQ(progress, want);
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy", "b.npy", "out.npy"}));
}

// A literal B is one element broadcast over every chunk; the chunks must still land in order.
// Nine chunks (4.5 MiB), one streamed input: pipelined in the `pipelined` variant.
TEST_P(StreamTest, ABroadcastLiteralKeepsChunkOrder) {
  const std::uint64_t n = 9 * kChunk;
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(n)));
  const OperationSpec spec = spec_of(OpKind::bit_and, {dir_.file("a.npy"), "0xffff0000"}, threads());
  const StreamResult r = stream(spec, dir_.file("out.npy"), {});
  EXPECT_TRUE(r.streamed);
  EXPECT_EQ(says_pipelined(r.timing.device), pipelines()) << r.timing.device;
  const auto out = test::values_of<std::uint32_t>(test::npy_data(test::read_file(dir_.file("out.npy"))));
  ASSERT_EQ(out.size(), n);
  // i & 0xffff0000 for i < 1179648 (0x120000): the chunk number's two high halfwords.
  for (std::uint64_t i : {std::uint64_t{0}, std::uint64_t{65535}, std::uint64_t{65536}, kChunk, 2 * kChunk + 7,
                          n - 1})
    EXPECT_EQ(out[i], static_cast<std::uint32_t>(i) & 0xffff0000u) << "element " << i;
  EXPECT_EQ(out[n - 1], 0x110000u);  // 1179647 = 0x11ffff
  std::vector<std::uint32_t> expected(n);
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = static_cast<std::uint32_t>(i) & 0xffff0000u;
  EXPECT_EQ(out, expected);
}

// Popcount narrows the output (uint32 to uint8): the chunk is sized by the wider input.
TEST_P(StreamTest, PopcountIntoANarrowerOutput) {
  const std::uint64_t n = 2 * kChunk + 1;
  std::vector<std::uint32_t> a(n);
  for (std::uint64_t i = 0; i < n; ++i) a[i] = (i % 3 == 0) ? 0xF0u : (i % 3 == 1 ? 0xFFFFFFFFu : 0x80000001u);
  test::write_file(dir_.file("a.npy"), test::npy_1d(a));
  OperationSpec spec = spec_of(OpKind::popcount, {dir_.file("a.npy")}, threads());
  spec.out_dtype = DType::uint8;
  const StreamResult r = stream(spec, dir_.file("out.npy"), {});
  EXPECT_FALSE(says_pipelined(r.timing.device)) << r.timing.device;  // narrower outputs never are
  const std::string file = test::read_file(dir_.file("out.npy"));
  EXPECT_NE(file.find("'descr': '|u1'"), std::string::npos);
  const std::string data = test::npy_data(file);
  ASSERT_EQ(data.size(), n);
  // popcount(0xF0) = 4, popcount(0xFFFFFFFF) = 32, popcount(0x80000001) = 2.
  for (std::uint64_t i = 0; i < n; ++i) {
    const int want = i % 3 == 0 ? 4 : (i % 3 == 1 ? 32 : 2);
    if (static_cast<unsigned char>(data[i]) != want) {
      ADD_FAILURE() << "element " << i << ": " << int(static_cast<unsigned char>(data[i])) << ", want " << want;
      break;
    }
  }
}

// An operation that broadcasts along an axis runs in memory (streamed = false) with the same result.
TEST_P(StreamTest, AxisBroadcastRunsInMemory) {
  test::write_file(dir_.file("a.npy"), test::npy_header_v1("|u1", "(2, 3)") + std::string("\x01\x02\x04\x08\x10\x20", 6));
  test::write_file(dir_.file("b.npy"), test::npy_header_v1("|u1", "(3,)") + std::string("\xff\x00\x0f", 3));
  const OperationSpec spec = spec_of(OpKind::bit_or, {dir_.file("a.npy"), dir_.file("b.npy")}, threads());
  const StreamResult r = stream(spec, dir_.file("out.npy"), {});
  EXPECT_FALSE(r.streamed);
  // Rows [1 2 4] and [8 16 32] or [255 0 15]: [255 2 15], [255 16 47].
  EXPECT_EQ(test::npy_data(test::read_file(dir_.file("out.npy"))), std::string("\xff\x02\x0f\xff\x10\x2f", 6));
}

TEST_P(StreamTest, AnOutputThatCannotBeCreatedLeavesNothing) {
  const std::uint64_t n = 2 * kChunk;
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(n)));
  test::write_file(dir_.file("plain"), "not a folder");
  const OperationSpec spec = spec_of(OpKind::bit_not, {dir_.file("a.npy")}, threads());
  for (const std::string& out : {dir_.file("missing/out.npy"), dir_.file("plain/out.npy")}) {
    try {
      stream(spec, out, {});
      ADD_FAILURE() << out << " was written";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::io) << e.what();
    }
  }
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy", "plain"}));
}

// Progress throwing on the second chunk: the run stops there, the first chunk written to the
// temporary file is discarded with it, and an existing output is left as it was.
TEST_P(StreamTest, AProgressCallbackThatThrowsLeavesTheOldOutput) {
  const std::uint64_t n = 10 * kChunk;  // 5 MiB
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(n)));
  test::write_file(dir_.file("out.npy"), "previous contents");
  const OperationSpec spec = spec_of(OpKind::bit_not, {dir_.file("a.npy")}, threads());
  int calls = 0;
  const auto progress = [&](std::uint64_t done, std::uint64_t) {
    ++calls;
    if (calls == 2) {
      EXPECT_EQ(done, 2 * kChunk);
      throw std::runtime_error("stop at the second chunk");
    }
  };
  std::string device;
  EXPECT_THROW(
      {
        try {
          stream(spec, dir_.file("out.npy"), progress, [&](const ValidatedOp&, const RunTiming& t) { device = t.device; });
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "stop at the second chunk");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(says_pipelined(device), pipelines()) << device;
  EXPECT_EQ(test::read_file(dir_.file("out.npy")), "previous contents");
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy", "out.npy"}));
}

// The input is cut to its header after the first chunk is written: a later chunk's read finds
// it short (Errc::io, naming the file), and no output is left. With a second thread (the
// `pipelined` variant) up to two chunks (kStreamSlots) may have been read before the cut, so
// the failure comes by the third of eight; on one thread at the second.
TEST_P(StreamTest, AnInputThatShrinksAfterTheFirstChunkLeavesNothing) {
  const std::uint64_t n = 8 * kChunk;
  const std::string header = test::npy_header_v1("<u4", "(1048576,)");
  test::write_file(dir_.file("a.npy"), header + test::le_bytes(ramp(n)));
  const OperationSpec spec = spec_of(OpKind::bit_not, {dir_.file("a.npy")}, threads());
  int calls = 0;
  const auto progress = [&](std::uint64_t, std::uint64_t) {
    if (++calls == 1) std::filesystem::resize_file(dir_.file("a.npy"), header.size());
  };
  std::string device;
  try {
    stream(spec, dir_.file("out.npy"), progress, [&](const ValidatedOp&, const RunTiming& t) { device = t.device; });
    ADD_FAILURE() << "the run succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io) << e.what();
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("reading '" + dir_.file("a.npy") + "': file shrank while reading", 0), 0u) << what;
  }
  EXPECT_EQ(says_pipelined(device), pipelines()) << device;
  if (!pipelines()) { EXPECT_EQ(calls, 1); }
  EXPECT_GE(calls, 1);
  EXPECT_LE(calls, 2);
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy"}));
}

TEST_P(StreamTest, OnValidatedRunsBeforeTheOutputExists) {
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(2 * kChunk)));
  const OperationSpec spec = spec_of(OpKind::shl, {dir_.file("a.npy"), "3"}, threads());
  int calls = 0;
  stream(spec, dir_.file("out.npy"), {}, [&](const ValidatedOp& op, const RunTiming& t) {
    ++calls;
    EXPECT_EQ(says_pipelined(t.device), pipelines()) << t.device;
    EXPECT_EQ(op.op().kind, OpKind::shl);
    EXPECT_EQ(t.backend, "cpu");
    EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy"}));
  });
  EXPECT_EQ(calls, 1);
  const auto out = test::values_of<std::uint32_t>(test::npy_data(test::read_file(dir_.file("out.npy"))));
  ASSERT_EQ(out.size(), 2 * kChunk);
  EXPECT_EQ(out[1], 8u);
  EXPECT_EQ(out[kChunk + 1], (kChunk + 1) << 3);  // 131073 * 8 = 1048584
  EXPECT_EQ(out[kChunk + 1], 1048584u);
}

// Whether a run with one streamed input pipelines, and what -v says when it does not, at the
// product's threshold (kPipelineMinOutputBytes, 64 MiB of output): under 4 MiB of work the
// backend's own reason ("outputs under 4 MiB run on one", as in memory), from there to 64 MiB
// "streamed outputs under 64 MiB run on one" (the pipeline measured slower there), and from 64
// MiB two threads. The results are the same either side of each line. The two 64 MiB inputs
// are sparse files (zeros, read without touching a disk), so that the test stays quick.
TEST(StreamThreadsTest, ASecondThreadOnlyFromSixtyFourMebibytesOfOutput) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never pipelined";
  static_assert(kPipelineMinOutputBytes == std::uint64_t{64} << 20, "the counts and texts below are for 64 MiB");
  TempDir dir("stream-threads-test");
  constexpr std::uint64_t kFirstPipelined = (std::uint64_t{64} << 20) / 4;  // uint32 elements in 64 MiB
  const std::pair<std::uint64_t, const char*> cases[] = {
      {2 * kChunk, "1 of 2 threads (outputs under 4 MiB run on one)"},
      {(std::uint64_t{4} << 20) / 4, "1 of 2 threads (streamed outputs under 64 MiB run on one)"},
      {kFirstPipelined - 1, "1 of 2 threads (streamed outputs under 64 MiB run on one)"},
      {kFirstPipelined, nullptr},
  };
  for (const auto& [n, reason] : cases) {
    SCOPED_TRACE(n);
    const bool sparse = n > kFirstPipelined / 2;
    std::vector<std::uint32_t> a;
    if (sparse) {
      const std::string header = test::npy_header_v1("<u4", "(" + std::to_string(n) + ",)");
      test::write_file(dir.file("a.npy"), header);
      std::filesystem::resize_file(dir.file("a.npy"), header.size() + n * 4);
    } else {
      a = ramp(n);
      test::write_file(dir.file("a.npy"), test::npy_1d(a));
    }
    const StreamResult r = stream_operation(spec_of(OpKind::bit_not, {dir.file("a.npy")}, 2), dir.file("out.npy"), {});
    EXPECT_TRUE(r.streamed);
    if (reason) {
      EXPECT_NE(r.timing.device.find(reason), std::string::npos) << r.timing.device;
    } else {
      EXPECT_EQ(r.timing.device.find("1 of 2"), std::string::npos) << r.timing.device;
      EXPECT_NE(r.timing.device.find("2 threads"), std::string::npos) << r.timing.device;
    }
    if (sparse) {  // ~0 is 0xffffffff: read at once and checked in place (64 MiB)
      std::string file(std::filesystem::file_size(dir.file("out.npy")), '\0');
      std::ifstream(dir.file("out.npy"), std::ios::binary).read(file.data(), static_cast<std::streamsize>(file.size()));
      ASSERT_GT(file.size(), n * 4);
      EXPECT_EQ(file.find_first_not_of('\xff', file.size() - n * 4), std::string::npos);
      EXPECT_EQ(test::npy_data(file.substr(0, file.size() - n * 4 + 4)), "\xff\xff\xff\xff");  // the header's end
    } else {
      std::vector<std::uint32_t> expected(n);
      for (std::uint64_t i = 0; i < n; ++i) expected[i] = ~a[i];
      EXPECT_EQ(test::npy_data(test::read_file(dir.file("out.npy"))), test::le_bytes(expected));
    }
  }
}

// Output elements narrower than the input's (popcount uint32 into uint8) keep a run on one
// thread at any size (stream.cpp, kNarrowerOnOne), even with the threshold at nothing
// (StreamOptions); into uint32, the same width, the same run pipelines. -v says which, and the
// results are the same.
TEST(StreamThreadsTest, NarrowerOutputsStayOnOneThread) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never pipelined";
  TempDir dir("stream-threads-test");
  const StreamOptions options{.pipeline_min_output_bytes = 0};
  const std::uint64_t n = (std::uint64_t{4} << 20) / 4 + 5;  // past 4 MiB of uint32 (the backend's own line)
  const std::vector<std::uint32_t> a = scrambled(n);
  test::write_file(dir.file("a.npy"), test::npy_1d(a));
  for (const DType out : {DType::uint8, DType::uint32}) {
    SCOPED_TRACE(dtype_info(out).numpy_name);
    OperationSpec spec = spec_of(OpKind::popcount, {dir.file("a.npy")}, 2);
    spec.out_dtype = out;
    const StreamResult r = stream_operation(spec, dir.file("out.npy"), {}, {}, options);
    EXPECT_TRUE(r.streamed);
    std::vector<std::uint32_t> counts(n);
    for (std::uint64_t i = 0; i < n; ++i) counts[i] = static_cast<std::uint32_t>(std::popcount(a[i]));
    const std::string data = test::npy_data(test::read_file(dir.file("out.npy")));
    if (out == DType::uint8) {
      EXPECT_NE(r.timing.device.find("1 of 2 threads (narrower outputs run on one)"), std::string::npos)
          << r.timing.device;
      EXPECT_EQ(data, test::le_bytes(counts, 1));
    } else {
      EXPECT_EQ(r.timing.device.find("1 of 2"), std::string::npos) << r.timing.device;
      EXPECT_NE(r.timing.device.find("2 threads"), std::string::npos) << r.timing.device;
      EXPECT_EQ(data, test::le_bytes(counts));
    }
  }
}

// Two streamed inputs keep a run on one thread at any size (stream.cpp, kTwoStreamsOnOne): the
// pipeline measured slower there. One streamed input beside one held in memory (a literal) is
// pipelined at the same size (here over a threshold lowered to 4 MiB through StreamOptions, to
// keep the files small). -v says which, and the results are the same.
TEST(StreamThreadsTest, TwoStreamedInputsStayOnOneThread) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never pipelined";
  TempDir dir("stream-threads-test");
  const StreamOptions options{.pipeline_min_output_bytes = std::uint64_t{4} << 20};
  const std::uint64_t n = (std::uint64_t{4} << 20) / 4 + 5;  // past 4 MiB of uint32: pipelined with one stream
  const auto a = ramp(n);
  const auto b = scrambled(n);
  test::write_file(dir.file("a.npy"), test::npy_1d(a));
  test::write_file(dir.file("b.npy"), test::npy_1d(b));

  const StreamResult two = stream_operation(spec_of(OpKind::bit_and, {dir.file("a.npy"), dir.file("b.npy")}, 2),
                                            dir.file("out.npy"), {}, {}, options);
  EXPECT_TRUE(two.streamed);
  EXPECT_NE(two.timing.device.find("1 of 2 threads (two streamed inputs run on one)"), std::string::npos)
      << two.timing.device;
  std::vector<std::uint32_t> expected(n);
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = a[i] & b[i];
  EXPECT_EQ(test::npy_data(test::read_file(dir.file("out.npy"))), test::le_bytes(expected));

  const StreamResult one = stream_operation(spec_of(OpKind::bit_and, {dir.file("a.npy"), "0xffff0000"}, 2),
                                            dir.file("out.npy"), {}, {}, options);
  EXPECT_TRUE(one.streamed);
  EXPECT_EQ(one.timing.device.find("1 of 2"), std::string::npos) << one.timing.device;
  EXPECT_NE(one.timing.device.find("2 threads"), std::string::npos) << one.timing.device;
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = a[i] & 0xffff0000u;
  EXPECT_EQ(test::npy_data(test::read_file(dir.file("out.npy"))), test::le_bytes(expected));
}

std::string variant_name(const ::testing::TestParamInfo<StreamVariant>& param) { return param.param.name; }
INSTANTIATE_TEST_SUITE_P(Variants, StreamTest, ::testing::ValuesIn(kVariants), variant_name);

// A pipe (standard input) that ends in the second chunk: Errc::invalid_input ("truncated"),
// found only after the first chunk was written, and no output left.
TEST(StreamPipeTest, AStandardInputThatEndsEarlyLeavesNothing) {
  TempDir dir("stream-pipe-test");
  const std::string bytes = test::npy_header_v1("<u4", "(393216,)") + test::le_bytes(ramp(kChunk + kChunk / 2));
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int saved = ::dup(STDIN_FILENO);
  ASSERT_GE(saved, 0);
  ASSERT_EQ(::dup2(fds[0], STDIN_FILENO), STDIN_FILENO);
  ::close(fds[0]);
  std::thread writer([&] {
    std::size_t off = 0;
    while (off < bytes.size()) {
      const ssize_t w = ::write(fds[1], bytes.data() + off, bytes.size() - off);
      if (w <= 0) break;
      off += static_cast<std::size_t>(w);
    }
    ::close(fds[1]);
  });
  int calls = 0;
  try {
    stream_operation(spec_of(OpKind::bit_not, {"-"}, 1), dir.file("out.npy"), [&](auto, auto) { ++calls; });
    ADD_FAILURE() << "the run succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input) << e.what();
    // 1.5 chunks of 4-byte elements: 196608 * 4 = 786432 of 393216 * 4 = 1572864 bytes.
    EXPECT_STREQ(e.what(), "reading standard input: truncated: expected 1572864 bytes of data, found 786432");
  }
  writer.join();
  ::dup2(saved, STDIN_FILENO);
  ::close(saved);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(dir.names(), std::set<std::string>{});
}

TEST(StreamSpecTest, RepeatOrWarmupIsRefused) {
  TempDir dir("stream-spec-test");
  OperationSpec spec = spec_of(OpKind::bit_not, {"[1, 2]"}, 1);
  spec.dtype = DType::uint8;
  spec.repeat = 2;
  try {
    stream_operation(spec, dir.file("out.npy"), {});
    ADD_FAILURE() << "repeat 2 was streamed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal);
  }
  spec.repeat = 1;
  spec.warmup = 1;
  EXPECT_THROW(stream_operation(spec, dir.file("out.npy"), {}), Error);
  EXPECT_EQ(dir.names(), std::set<std::string>{});
}

TEST(StreamInterruptDeathTest, AnInterruptBetweenChunksLeavesNothing) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir("stream-interrupt-test");
  test::write_file(dir.file("a.npy"), test::npy_1d(ramp(4 * kChunk)));
  const auto child = [&] {
    int calls = 0;
    try {
      stream_operation(spec_of(OpKind::bit_not, {dir.file("a.npy")}, 1), dir.file("out.npy"), [&](auto, auto) {
        if (++calls == 1) request_interrupt();
      });
    } catch (const Error& e) {
      const bool clean = e.code() == Errc::interrupted && calls == 1 && dir.names() == std::set<std::string>{"a.npy"};
      std::fprintf(stderr, "%s: %s\n", clean ? "clean" : "unclean", e.what());
      std::fflush(stderr);
      std::error_code ec;
      std::filesystem::remove_all(dir.path(), ec);  // _Exit runs no destructors
      std::_Exit(clean ? 0 : 1);
    }
    std::_Exit(2);
  };
  EXPECT_EXIT(child(), ::testing::ExitedWithCode(0), "clean: interrupted");
}

}  // namespace
}  // namespace dmlbits
