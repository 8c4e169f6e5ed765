// Streamed runs (dmlbits/stream.hpp): stream_operation over several kStreamChunkBytes chunks
// must write, byte for byte, what run_operation computes in memory and what the test computes
// by hand, whether reading and computing run on a second thread (the `pipelined` variant:
// threads = 2 with the pipeline's threshold lowered to nothing through StreamOptions,
// run_pipelined), the chunks are split in two halves each read, computed and written at its
// offsets by its own thread (the `halves` variant: the halves' threshold at nothing), in N slices
// likewise (the `slices3`, `slices4` and `slices7` variants: threads = N, as many slices as the
// run has chunks up to N), or neither
// (threads = 1, and threads = 2 at the product's thresholds, which these files stay under); a
// failure mid-stream (an output that cannot be created, an input that shrinks or a pipe that ends
// after the first chunk, a progress callback that throws, an interrupt) must leave neither the
// output nor a temporary file, and an existing output as it was.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <csignal>
#include <limits>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

OperationRequest spec_of(OpKind op, std::vector<std::string> operands, unsigned threads) {
  OperationRequest s;
  s.op = op;
  s.operands.assign(operands.begin(), operands.end());
  s.backend = test::kind("cpu");
  if (threads) s.threads = threads;
  return s;
}

// stream_operation on `spec` as prepare_request prepares it, with these hooks.
RunResult stream_operation(const OperationRequest& spec, const std::string& out, const ProgressFn& progress,
                           const std::function<void(const Operation&, const RunTiming&)>& on_validated = {},
                           const StreamOptions& options = {}) {
  RunHooks hooks;
  hooks.progress = progress;
  hooks.on_validated = on_validated;
  return dmlbits::stream_operation(prepare_request(spec), out, hooks, options);
}

constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();

// The ways a StreamTest runs: threads, and the thresholds of the two-thread splits
// (StreamOptions).
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
    {"pipelined", 2, StreamOptions{.pipeline_min_output_bytes = 0, .halves_min_output_bytes = kNever}},
    {"halves", 2, StreamOptions{.pipeline_min_output_bytes = kNever, .halves_min_output_bytes = 0}},
    {"slices3", 3, StreamOptions{.pipeline_min_output_bytes = kNever, .halves_min_output_bytes = 0}},
    {"slices4", 4, StreamOptions{.pipeline_min_output_bytes = kNever, .halves_min_output_bytes = 0}},
    {"slices7", 7, StreamOptions{.pipeline_min_output_bytes = kNever, .halves_min_output_bytes = 0}},
};
constexpr std::string_view kHalvesText = "2 threads (each reads, computes and writes half)";

// What -v says of a run split in `slices` by a backend of `threads` threads: "2 threads (each
// reads, computes and writes half)", "3 of 7 threads (each reads, computes and writes 1/3)".
std::string slices_text(unsigned slices, unsigned threads) {
  const std::string count =
      slices == threads ? std::to_string(slices) : std::to_string(slices) + " of " + std::to_string(threads);
  const std::string part = slices == 2 ? "half" : "1/" + std::to_string(slices);
  return count + " threads (each reads, computes and writes " + part + ")";
}

// Whether a device description says the run used two threads or more (", 1 of 2 threads (...)"
// no; ", 2 threads (...)", ", 4 of 7 threads (...)" yes).
bool on_several_threads(const std::string& device) {
  // The count follows the ", " before the first " thread" (the reasons have commas of their own).
  const auto word = device.find(" thread");
  const auto comma = word == std::string::npos ? word : device.rfind(", ", word);
  if (comma == std::string::npos) return false;
  return std::stoul(device.substr(comma + 2)) >= 2;
}

std::string run_in_memory(OperationRequest spec) {
  spec.output = OutputKind::memory;
  const RunResult r = run_operation(prepare_request(spec));
  const TensorView v = r.result.value().view();
  return {reinterpret_cast<const char*>(v.data), v.byte_size()};
}

class StreamTest : public ::testing::TestWithParam<StreamVariant> {
 protected:
  unsigned threads() const { return GetParam().threads; }
  RunResult stream(const OperationRequest& spec, const std::string& out, const ProgressFn& progress,
                   const std::function<void(const Operation&, const RunTiming&)>& on_validated = {}) {
    return stream_operation(spec, out, progress, on_validated, GetParam().options);
  }
  // Whether a run's device description (RunTiming::device) says it was pipelined or split: two
  // threads or more used (a streamed run computes each 512 KiB chunk on one, so a second is the
  // reader's or another slice's).
  static bool says_pipelined(const std::string& device) { return on_several_threads(device); }
  // Whether a run with one streamed input (a regular file, into a new file) uses two threads.
  bool pipelines() const {
    return std::string_view(GetParam().name) != "threads1" && std::string_view(GetParam().name) != "threads2" &&
           std::thread::hardware_concurrency() >= 2;
  }
  // Whether the run is split in halves or slices (each thread writing at its offsets).
  bool halves() const { return pipelines() && std::string_view(GetParam().name) != "pipelined"; }
  TempDir dir_{"stream-test"};
};

// Three full chunks and a partial one of two full-size inputs; the output's data is the
// elementwise xor, as run_operation and the loop below have it.
TEST_P(StreamTest, ChunksMatchTheInMemoryRunAndTheHandResult) {
  const std::uint64_t n = 3 * kChunk + 5;
  const auto a = ramp(n), b = scrambled(n);
  test::write_file(dir_.file("a.npy"), test::npy_1d(a));
  test::write_file(dir_.file("b.npy"), test::npy_1d(b));
  const OperationRequest spec = spec_of(OpKind::bit_xor, {dir_.file("a.npy"), dir_.file("b.npy")}, threads());

  std::vector<std::pair<std::uint64_t, std::uint64_t>> progress;
  const RunResult r = stream(spec, dir_.file("out.npy"),
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
  if (!halves()) {
    EXPECT_EQ(progress, want);
  } else {
    // Two streamed inputs split in halves (chunks 0-1 here, 2-3 on the second thread): progress
    // comes from the calling thread as the elements both have written, rising, at most once per
    // chunk, ending with all.
    EXPECT_TRUE(device_text(r.timing.device).ends_with(", " + slices_text(std::min(threads(), 4u), threads())))
        << device_text(r.timing.device);
    ASSERT_FALSE(progress.empty());
    EXPECT_LE(progress.size(), 4u);
    EXPECT_EQ(progress.back(), (std::pair<std::uint64_t, std::uint64_t>{393221, 393221}));
    for (std::size_t i = 0; i < progress.size(); ++i) {
      EXPECT_EQ(progress[i].second, 393221u);
      if (i > 0) {
        EXPECT_GT(progress[i].first, progress[i - 1].first);
      }
    }
  }
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy", "b.npy", "out.npy"}));
}

// A literal B is one element broadcast over every chunk; the chunks must still land in order.
// Nine chunks (4.5 MiB), one streamed input: pipelined in the `pipelined` variant.
TEST_P(StreamTest, ABroadcastLiteralKeepsChunkOrder) {
  const std::uint64_t n = 9 * kChunk;
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(n)));
  const OperationRequest spec = spec_of(OpKind::bit_and, {dir_.file("a.npy"), "0xffff0000"}, threads());
  const RunResult r = stream(spec, dir_.file("out.npy"), {});
  EXPECT_TRUE(r.streamed);
  EXPECT_EQ(says_pipelined(device_text(r.timing.device)), pipelines()) << device_text(r.timing.device);
  const auto out = test::values_of<std::uint32_t>(test::npy_data(test::read_file(dir_.file("out.npy"))));
  ASSERT_EQ(out.size(), n);
  // i & 0xffff0000 for i < 1179648 (0x120000): the chunk number's two high halfwords.
  for (std::uint64_t i : {std::uint64_t{0}, std::uint64_t{65535}, std::uint64_t{65536}, kChunk, 2 * kChunk + 7, n - 1})
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
  OperationRequest spec = spec_of(OpKind::popcount, {dir_.file("a.npy")}, threads());
  spec.out_dtype = DType::uint8;
  const RunResult r = stream(spec, dir_.file("out.npy"), {});
  EXPECT_FALSE(says_pipelined(device_text(r.timing.device)))
      << device_text(r.timing.device);  // narrower outputs never are
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

// An expression streams as one operator does (one run path: an operator is a graph of one
// node): chunk by chunk, on the variant's threads, byte for byte what the in-memory run and the
// loop below give, with a one-element constant in every chunk.
TEST_P(StreamTest, AnExpressionStreamsAsOneOperatorDoes) {
  const std::uint64_t n = 5 * kChunk + 3;
  const auto a = ramp(n), b = scrambled(n);
  test::write_file(dir_.file("a.npy"), test::npy_1d(a));
  test::write_file(dir_.file("b.npy"), test::npy_1d(b));
  OperationRequest spec;
  spec.expression = "(a & ~b) ^ 0x5a5a0000";
  spec.names = {"a", "b"};
  spec.operands = {dir_.file("a.npy"), dir_.file("b.npy")};
  spec.backend = test::kind("cpu");
  spec.threads = threads();
  std::uint64_t calls = 0;
  const RunResult r = stream(spec, dir_.file("out.npy"), [&](std::uint64_t, std::uint64_t) { ++calls; });
  EXPECT_TRUE(r.streamed);
  EXPECT_GE(calls, 1u);
  EXPECT_EQ(r.op.summary().expression, "(a & ~b) ^ 0x5a5a0000");
  std::vector<std::uint32_t> expected(n);
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = (a[i] & ~b[i]) ^ 0x5a5a0000u;
  const std::string data = test::npy_data(test::read_file(dir_.file("out.npy")));
  EXPECT_EQ(data, test::le_bytes(expected));
  EXPECT_EQ(data, run_in_memory(spec));
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy", "b.npy", "out.npy"}));
}

// Operands of different widths in one expression (popcount(a) is UINT8, so c is): each input's
// chunk is read at its own element size.
TEST_P(StreamTest, AnExpressionOverOperandsOfDifferentWidths) {
  const std::uint64_t n = 3 * kChunk + 11;
  const auto a = scrambled(n);
  std::vector<std::uint8_t> c(n);
  for (std::uint64_t i = 0; i < n; ++i) c[i] = static_cast<std::uint8_t>(i * 7);
  test::write_file(dir_.file("a.npy"), test::npy_1d(a));
  test::write_file(dir_.file("c.npy"), test::npy_header_v1("|u1", "(" + std::to_string(n) + ",)") +
                                           std::string(reinterpret_cast<const char*>(c.data()), n));
  OperationRequest spec;
  spec.expression = "popcount(a) | c";
  spec.names = {"a", "c"};
  spec.operands = {dir_.file("a.npy"), dir_.file("c.npy")};
  spec.backend = test::kind("cpu");
  spec.threads = threads();
  const RunResult r = stream(spec, dir_.file("out.npy"), {});
  EXPECT_TRUE(r.streamed);
  std::string expected(n, '\0');
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = static_cast<char>(std::popcount(a[i]) | c[i]);
  const std::string data = test::npy_data(test::read_file(dir_.file("out.npy")));
  EXPECT_EQ(data, expected);
  EXPECT_EQ(data, run_in_memory(spec));
}

// An expression whose input shrinks mid-stream leaves the old output as it was, as one
// operator's does.
TEST_P(StreamTest, AnExpressionWhoseInputShrinksLeavesTheOldOutput) {
  const std::uint64_t n = 8 * kChunk;
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(n)));
  const std::string header = test::npy_header_v1("<u4", "(1048576,)");
  test::write_file(dir_.file("b.npy"), header + test::le_bytes(scrambled(n)));
  test::write_file(dir_.file("out.npy"), "old");
  OperationRequest spec;
  spec.expression = "a ^ (b >> 1)";
  spec.names = {"a", "b"};
  spec.operands = {dir_.file("a.npy"), dir_.file("b.npy")};
  spec.backend = test::kind("cpu");
  spec.threads = threads();
  int calls = 0;
  const auto progress = [&](std::uint64_t, std::uint64_t) {
    if (++calls == 1) std::filesystem::resize_file(dir_.file("b.npy"), header.size());
  };
  try {
    stream(spec, dir_.file("out.npy"), progress);
    ADD_FAILURE() << "the run succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io) << e.what();
    EXPECT_NE(std::string(e.what()).find("file shrank while reading"), std::string::npos) << e.what();
  }
  EXPECT_EQ(test::read_file(dir_.file("out.npy")), "old");
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy", "b.npy", "out.npy"}));
}

// An operation that broadcasts along an axis runs in memory (streamed = false) with the same result.
TEST_P(StreamTest, AxisBroadcastRunsInMemory) {
  test::write_file(dir_.file("a.npy"),
                   test::npy_header_v1("|u1", "(2, 3)") + std::string("\x01\x02\x04\x08\x10\x20", 6));
  test::write_file(dir_.file("b.npy"), test::npy_header_v1("|u1", "(3,)") + std::string("\xff\x00\x0f", 3));
  const OperationRequest spec = spec_of(OpKind::bit_or, {dir_.file("a.npy"), dir_.file("b.npy")}, threads());
  const RunResult r = stream(spec, dir_.file("out.npy"), {});
  EXPECT_FALSE(r.streamed);
  // Rows [1 2 4] and [8 16 32] or [255 0 15]: [255 2 15], [255 16 47].
  EXPECT_EQ(test::npy_data(test::read_file(dir_.file("out.npy"))), std::string("\xff\x02\x0f\xff\x10\x2f", 6));
}

TEST_P(StreamTest, AnOutputThatCannotBeCreatedLeavesNothing) {
  const std::uint64_t n = 2 * kChunk;
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(n)));
  test::write_file(dir_.file("plain"), "not a folder");
  const OperationRequest spec = spec_of(OpKind::bit_not, {dir_.file("a.npy")}, threads());
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
  const OperationRequest spec = spec_of(OpKind::bit_not, {dir_.file("a.npy")}, threads());
  int calls = 0;
  const auto progress = [&](std::uint64_t done, std::uint64_t) {
    ++calls;
    if (calls == 2) {
      if (halves()) {
        EXPECT_GE(done, 2 * kChunk);  // with what the second thread has written
      } else {
        EXPECT_EQ(done, 2 * kChunk);
      }
      throw std::runtime_error("stop at the second chunk");
    }
  };
  std::string device;
  EXPECT_THROW(
      {
        try {
          stream(spec, dir_.file("out.npy"), progress,
                 [&](const Operation&, const RunTiming& t) { device = device_text(t.device); });
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
  const OperationRequest spec = spec_of(OpKind::bit_not, {dir_.file("a.npy")}, threads());
  int calls = 0;
  const auto progress = [&](std::uint64_t, std::uint64_t) {
    if (++calls == 1) std::filesystem::resize_file(dir_.file("a.npy"), header.size());
  };
  std::string device;
  try {
    stream(spec, dir_.file("out.npy"), progress,
           [&](const Operation&, const RunTiming& t) { device = device_text(t.device); });
    ADD_FAILURE() << "the run succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io) << e.what();
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("reading '" + dir_.file("a.npy") + "': file shrank while reading", 0), 0u) << what;
  }
  EXPECT_EQ(says_pipelined(device), pipelines()) << device;
  if (!pipelines()) {
    EXPECT_EQ(calls, 1);
  }
  EXPECT_GE(calls, 1);
  EXPECT_LE(calls, 2);
  EXPECT_EQ(dir_.names(), (std::set<std::string>{"a.npy"}));
}

TEST_P(StreamTest, OnValidatedRunsBeforeTheOutputExists) {
  test::write_file(dir_.file("a.npy"), test::npy_1d(ramp(2 * kChunk)));
  const OperationRequest spec = spec_of(OpKind::shl, {dir_.file("a.npy"), "3"}, threads());
  int calls = 0;
  stream(spec, dir_.file("out.npy"), {}, [&](const Operation& op, const RunTiming& t) {
    ++calls;
    EXPECT_EQ(says_pipelined(device_text(t.device)), pipelines()) << device_text(t.device);
    EXPECT_EQ(op.summary().op, OpKind::shl);
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

// Which split a streamed run uses, and what -v says, at the product's thresholds: under 4 MiB of
// work the backend's own reason ("outputs under 4 MiB run on one", as in memory); with regular
// files in and a new file out, "streamed outputs under 16 MiB run on one" to 16 MiB
// (kHalvesMinOutputBytes), halves from there, for one streamed input and for two; into a device
// (/dev/null, written in order), one streamed input pipelines from 64 MiB
// (kPipelineMinOutputBytes) and two stay on one thread. The results are the same either side of
// each line. Inputs from 16 MiB are sparse files (zeros, read without touching a disk).
TEST(StreamThreadsTest, TheSplitBySizeInputsAndOutput) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never two";
  static_assert(kHalvesMinOutputBytes == std::uint64_t{16} << 20, "the counts and texts below are for 16 MiB");
  static_assert(kPipelineMinOutputBytes == std::uint64_t{64} << 20, "the counts and texts below are for 64 MiB");
  TempDir dir("stream-threads-test");
  constexpr std::uint64_t kHalves = (std::uint64_t{16} << 20) / 4;  // uint32 elements in 16 MiB
  constexpr std::uint64_t kPipeline = (std::uint64_t{64} << 20) / 4;
  const std::string kUnder16 = "1 of 2 threads (streamed outputs under 16 MiB run on one)";
  const std::string kUnder64 = "1 of 2 threads (streamed outputs under 64 MiB run on one)";
  const std::string kPipelined = "2 threads (one reads and computes, one writes)";
  const std::string kDevice = "1 of 2 threads (two streamed inputs through a pipe or device run on one)";
  struct Case {
    std::uint64_t n;
    bool two_inputs;
    bool to_device;  // into /dev/null
    std::string text;
  };
  const Case cases[] = {
      {2 * kChunk, false, false, "1 of 2 threads (outputs under 4 MiB run on one)"},
      {2 * kChunk, true, false, "1 of 2 threads (outputs under 4 MiB run on one)"},
      {(std::uint64_t{4} << 20) / 4, false, false, kUnder16},
      {(std::uint64_t{4} << 20) / 4, true, false, kUnder16},
      {kHalves - 1, false, false, kUnder16},
      {kHalves - 1, true, false, kUnder16},
      {kHalves, false, false, std::string(kHalvesText)},
      {kHalves, true, false, std::string(kHalvesText)},
      {kHalves, false, true, kUnder64},
      {kHalves, true, true, kDevice},
      {kPipeline - 1, false, true, kUnder64},
      {kPipeline, false, true, kPipelined},
      {kPipeline, true, true, kDevice},
      {kPipeline, false, false, std::string(kHalvesText)},
  };
  std::uint64_t made = 0;
  std::vector<std::uint32_t> a, b;
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.n) + (c.two_inputs ? " and" : " not") + (c.to_device ? " into /dev/null" : ""));
    const bool sparse = c.n >= kHalves;
    if (made != c.n) {
      made = c.n;
      if (sparse) {
        const std::string header = test::npy_header_v1("<u4", "(" + std::to_string(c.n) + ",)");
        for (const char* name : {"a.npy", "b.npy"}) {
          test::write_file(dir.file(name), header);
          std::filesystem::resize_file(dir.file(name), header.size() + c.n * 4);
        }
      } else {
        a = ramp(c.n);
        b = scrambled(c.n);
        test::write_file(dir.file("a.npy"), test::npy_1d(a));
        test::write_file(dir.file("b.npy"), test::npy_1d(b));
      }
    }
    const OperationRequest spec = c.two_inputs ? spec_of(OpKind::bit_and, {dir.file("a.npy"), dir.file("b.npy")}, 2)
                                               : spec_of(OpKind::bit_not, {dir.file("a.npy")}, 2);
    const RunResult r = stream_operation(spec, c.to_device ? "/dev/null" : dir.file("out.npy"), {});
    EXPECT_TRUE(r.streamed);
    EXPECT_TRUE(device_text(r.timing.device).ends_with(", " + c.text)) << device_text(r.timing.device);
    if (c.to_device) continue;
    if (sparse) {  // and: 0, not: 0xffffffff; read at once and checked in place
      std::string file(std::filesystem::file_size(dir.file("out.npy")), '\0');
      std::ifstream(dir.file("out.npy"), std::ios::binary).read(file.data(), static_cast<std::streamsize>(file.size()));
      ASSERT_GT(file.size(), c.n * 4);
      const char want = c.two_inputs ? '\0' : '\xff';
      EXPECT_EQ(file.find_first_not_of(want, file.size() - c.n * 4), std::string::npos);
      EXPECT_EQ(file[file.size() - c.n * 4 - 1], '\n');  // the header's end
    } else {
      std::vector<std::uint32_t> expected(c.n);
      for (std::uint64_t i = 0; i < c.n; ++i) expected[i] = c.two_inputs ? a[i] & b[i] : ~a[i];
      EXPECT_EQ(test::npy_data(test::read_file(dir.file("out.npy"))), test::le_bytes(expected));
    }
    EXPECT_EQ(dir.names(), (std::set<std::string>{"a.npy", "b.npy", "out.npy"}));
  }
}

// Output elements narrower than the input's (popcount uint32 into uint8) keep a run on one
// thread at any size (stream.cpp, kNarrowerOnOne), even with the thresholds at nothing
// (StreamOptions); into uint32, the same width, the same run is split in halves. -v says which,
// and the results are the same.
TEST(StreamThreadsTest, NarrowerOutputsStayOnOneThread) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never pipelined";
  TempDir dir("stream-threads-test");
  const StreamOptions options{.pipeline_min_output_bytes = 0, .halves_min_output_bytes = 0};
  const std::uint64_t n = (std::uint64_t{4} << 20) / 4 + 5;  // past 4 MiB of uint32 (the backend's own line)
  const std::vector<std::uint32_t> a = scrambled(n);
  test::write_file(dir.file("a.npy"), test::npy_1d(a));
  for (const DType out : {DType::uint8, DType::uint32}) {
    SCOPED_TRACE(dtype_info(out).numpy_name);
    OperationRequest spec = spec_of(OpKind::popcount, {dir.file("a.npy")}, 2);
    spec.out_dtype = out;
    const RunResult r = stream_operation(spec, dir.file("out.npy"), {}, {}, options);
    EXPECT_TRUE(r.streamed);
    std::vector<std::uint32_t> counts(n);
    for (std::uint64_t i = 0; i < n; ++i) counts[i] = static_cast<std::uint32_t>(std::popcount(a[i]));
    const std::string data = test::npy_data(test::read_file(dir.file("out.npy")));
    if (out == DType::uint8) {
      EXPECT_NE(device_text(r.timing.device).find("1 of 2 threads (narrower outputs run on one)"), std::string::npos)
          << device_text(r.timing.device);
      EXPECT_EQ(data, test::le_bytes(counts, 1));
    } else {
      EXPECT_EQ(device_text(r.timing.device).find("1 of 2"), std::string::npos) << device_text(r.timing.device);
      EXPECT_NE(device_text(r.timing.device).find("2 threads"), std::string::npos) << device_text(r.timing.device);
      EXPECT_EQ(data, test::le_bytes(counts));
    }
  }
}

std::string variant_name(const ::testing::TestParamInfo<StreamVariant>& param) { return param.param.name; }
INSTANTIATE_TEST_SUITE_P(Variants, StreamTest, ::testing::ValuesIn(kVariants), variant_name);

// ---- halves: two threads, each reading, computing and writing its own half of the chunks -------

const StreamOptions kHalvesAlways{.pipeline_min_output_bytes = kNever, .halves_min_output_bytes = 0};

// Random bytes: any pattern is a valid element of any dtype (the operators read floats' bits).
std::string random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (std::size_t i = 0; i < n; i += 4) {
    const auto w = static_cast<std::uint32_t>(gen());
    std::memcpy(out.data() + i, &w, std::min<std::size_t>(4, n - i));
  }
  return out;
}

std::string npy_of(const DTypeInfo& t, std::uint64_t n, const std::string& data) {
  return test::npy_header_v1(t.numpy_descr(), "(" + std::to_string(n) + ",)") + data;
}

// Every operator of the table at every input dtype it takes (and popcount at every output dtype),
// split in slices on `threads` threads with the slices' threshold at nothing, writes byte for
// byte what run_operation computes in memory, for the sizes `sizes(dtype, chunk)` gives; and, for
// the binary operators at `broadcast_size(chunk)`, B broadcast as a literal and as a one-element
// file. Runs of two chunks or more are split (in as many slices as they have chunks, up to
// `threads`), but for outputs narrower than their input. Returns the runs split.
int expect_every_operator_and_dtype_sliced(unsigned threads,
                                           const std::function<std::vector<std::uint64_t>(DType, std::uint64_t)>& sizes,
                                           const std::function<std::uint64_t(std::uint64_t)>& broadcast_size) {
  TempDir dir("stream-halves-test");
  struct Run {
    std::uint64_t n;
    const OpInfo* op;
    std::optional<DType> out;
    std::uint64_t chunk;
  };
  std::uint32_t seed = threads;
  int split_runs = 0;
  for (const DTypeInfo& in : dtype_table()) {
    std::vector<Run> runs;
    for (const OpInfo& op : op_table()) {
      const OpTier* tier = op.tier_at(newest_feature_level());
      if (!tier || !tier->inputs.contains(in.dtype)) continue;
      std::vector<std::optional<DType>> outs;
      if (tier->outputs.empty()) outs.push_back(std::nullopt);
      for (const DTypeInfo& out : dtype_table())
        if (tier->outputs.contains(out.dtype)) outs.push_back(out.dtype);
      for (const auto out : outs) {
        const std::uint64_t chunk = kStreamChunkBytes / std::max(in.size, out ? dtype_info(*out).size : in.size);
        for (const std::uint64_t n : sizes(in.dtype, chunk)) runs.push_back({n, &op, out, chunk});
      }
    }
    // Grouped by size, so that each size's files are written once.
    std::stable_sort(runs.begin(), runs.end(), [](const Run& x, const Run& y) { return x.n < y.n; });
    std::optional<std::uint64_t> written;
    for (const Run& run : runs) {
      SCOPED_TRACE(std::string(run.op->verb) + " " + std::string(in.numpy_name) +
                   (run.out ? " into " + std::string(dtype_info(*run.out).numpy_name) : "") + ", " +
                   std::to_string(run.n) + " elements on " + std::to_string(threads) + " threads");
      if (written != run.n) {
        written = run.n;
        test::write_file(dir.file("a.npy"), npy_of(in, run.n, random_bytes(run.n * in.size, seed++)));
        test::write_file(dir.file("b.npy"), npy_of(in, run.n, random_bytes(run.n * in.size, seed++)));
        test::write_file(dir.file("one.npy"), npy_of(in, 1, random_bytes(in.size, seed++)));
      }
      std::vector<std::vector<std::string>> operand_sets{{dir.file("a.npy")}};
      if (run.op->arity == 2) {
        operand_sets = {{dir.file("a.npy"), dir.file("b.npy")}};
        if (run.n == broadcast_size(run.chunk)) {
          operand_sets.push_back({dir.file("a.npy"), "3"});
          operand_sets.push_back({dir.file("a.npy"), dir.file("one.npy")});
        }
      }
      const std::uint64_t chunks = (run.n + run.chunk - 1) / run.chunk;
      const bool narrower = run.out && dtype_info(*run.out).size < in.size;
      const bool splits = chunks >= 2 && !narrower;
      const std::string text = slices_text(static_cast<unsigned>(std::min<std::uint64_t>(threads, chunks)), threads);
      for (const auto& operands : operand_sets) {
        OperationRequest spec = spec_of(run.op->kind, operands, threads);
        spec.out_dtype = run.out;
        const RunResult r = stream_operation(spec, dir.file("out.npy"), {}, {}, kHalvesAlways);
        EXPECT_TRUE(r.streamed);
        const bool split = device_text(r.timing.device).ends_with(", " + text);
        EXPECT_EQ(split, splits) << device_text(r.timing.device);
        EXPECT_EQ(on_several_threads(device_text(r.timing.device)), splits) << device_text(r.timing.device);
        split_runs += split;
        EXPECT_EQ(test::npy_data(test::read_file(dir.file("out.npy"))), run_in_memory(spec)) << operands.back();
        EXPECT_EQ(dir.names(), (std::set<std::string>{"a.npy", "b.npy", "one.npy", "out.npy"}));
      }
    }
  }
  return split_runs;
}

// Halves: for sizes 0, 1 and five chunks less one element (an odd count, the last chunk partial:
// three on the calling thread, two on the second) at every dtype; at uint32 also around one chunk
// and the split point (one chunk less and more one element, two and three whole chunks, three and
// one element); B broadcast at five chunks less one.
TEST(StreamHalvesTest, EveryOperatorAndDtypeMatchesTheInMemoryRun) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never two";
  const int split_runs = expect_every_operator_and_dtype_sliced(
      2,
      [](DType dtype, std::uint64_t chunk) {
        std::vector<std::uint64_t> sizes{0, 1, 5 * chunk - 1};
        if (dtype == DType::uint32)
          sizes.insert(sizes.end(), {chunk - 1, chunk + 1, 2 * chunk, 3 * chunk, 3 * chunk + 1});
        return sizes;
      },
      [](std::uint64_t chunk) { return 5 * chunk - 1; });
  EXPECT_GT(split_runs, 50);  // the table's operators and dtypes were there to split
}

// Slices on 3, 4 and 7 threads, around their edges. Every operator at every dtype on one of the
// three (the dtypes of the table dealt out in turn, so that the test takes seconds), at N chunks
// less one element (N slices, the last chunk partial) and, for the binary operators, B broadcast
// there; at uint32 on each of the three, also N chunks and one element (the first slice two
// chunks, the last one element) and N + 2 chunks less one (the first slices longer).
TEST(StreamHalvesTest, SlicesOnThreeFourAndSevenThreadsMatchTheInMemoryRun) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never two";
  const unsigned counts[] = {3u, 4u, 7u};
  int split_runs = 0;
  for (std::size_t k = 0; k < std::size(counts); ++k) {
    const unsigned threads = counts[k];
    split_runs += expect_every_operator_and_dtype_sliced(
        threads,
        [&](DType dtype, std::uint64_t chunk) {
          const auto index = static_cast<std::size_t>(&dtype_info(dtype) - dtype_table().data());
          std::vector<std::uint64_t> sizes;
          if (index % std::size(counts) == k || dtype == DType::uint32) sizes.push_back(threads * chunk - 1);
          if (dtype == DType::uint32) sizes.insert(sizes.end(), {threads * chunk + 1, (threads + 2) * chunk - 1});
          return sizes;
        },
        [&](std::uint64_t chunk) { return threads * chunk - 1; });
  }
  EXPECT_GT(split_runs, 50);  // the table's operators and dtypes were there to split
}

// A is cut, once the run is validated (before any output exists), to the calling thread's half:
// every chunk of that half is read whole, and the second thread's first read finds nothing. The
// run fails (Errc::io, naming the file and what is left of it), and an existing output is kept.
TEST(StreamHalvesTest, AnInputCutUnderTheSecondHalfFailsTheRunAndLeavesNothing) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never two";
  // On N threads, 2N + 1 chunks: the calling thread's slice is chunks 0-2 (ceil((2N + 1) / N) = 3),
  // the others' two each: on 2 threads 0-2 and 3-4, on 7 threads 0-2, 3-4, ..., 13-14.
  for (const unsigned threads : {2u, 3u, 4u, 7u}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    TempDir dir("stream-halves-test");
    const std::uint64_t n = (2 * threads + 1) * kChunk;
    const std::string header = test::npy_header_v1("<u4", "(" + std::to_string(n) + ",)");
    test::write_file(dir.file("a.npy"), header + test::le_bytes(ramp(n)));
    test::write_file(dir.file("b.npy"), test::npy_1d(scrambled(n)));
    test::write_file(dir.file("out.npy"), "previous contents");
    const OperationRequest spec = spec_of(OpKind::bit_and, {dir.file("a.npy"), dir.file("b.npy")}, threads);
    std::vector<std::uint64_t> progress;
    try {
      stream_operation(
          spec, dir.file("out.npy"), [&](std::uint64_t done, std::uint64_t) { progress.push_back(done); },
          [&](const Operation&, const RunTiming& t) {
            EXPECT_TRUE(device_text(t.device).ends_with(", " + slices_text(threads, threads))) << device_text(t.device);
            std::filesystem::resize_file(dir.file("a.npy"), header.size() + 3 * kChunk * 4);
          },
          kHalvesAlways);
      ADD_FAILURE() << "the run succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::io) << e.what();
      // 5 chunks of 4-byte elements: 2621440 bytes; 3: 1572864 (the message's figures on 2 threads).
      EXPECT_EQ(std::string(e.what()), "reading '" + dir.file("a.npy") + "': file shrank while reading: expected " +
                                           std::to_string(n * 4) + " bytes of data, found " +
                                           std::to_string(3 * kChunk * 4));
    }
    EXPECT_LE(progress.size(), 3u);  // at most the calling thread's three chunks
    for (const std::uint64_t done : progress) EXPECT_LE(done, 3 * kChunk);
    EXPECT_EQ(test::read_file(dir.file("out.npy")), "previous contents");
    EXPECT_EQ(dir.names(), (std::set<std::string>{"a.npy", "b.npy", "out.npy"}));
  }
}

// Every slice fails: B is cut to its header once the run is validated, so each thread's first
// read finds nothing. The first failure is thrown (all say the same: nothing of B's data is
// left), once, after every thread stopped; nothing is left. On 2 threads (halves) and more.
TEST(StreamHalvesTest, BothHalvesFindTheirInputCutAndTheRunLeavesNothing) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never two";
  for (const unsigned threads : {2u, 4u, 7u}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    TempDir dir("stream-halves-test");
    const std::uint64_t n = (threads + 4) * kChunk;  // 6 chunks on 2 threads: 786432 elements
    const std::string header = test::npy_header_v1("<u4", "(" + std::to_string(n) + ",)");
    test::write_file(dir.file("a.npy"), test::npy_1d(ramp(n)));
    test::write_file(dir.file("b.npy"), header + test::le_bytes(scrambled(n)));
    const OperationRequest spec = spec_of(OpKind::bit_or, {dir.file("a.npy"), dir.file("b.npy")}, threads);
    int calls = 0;
    try {
      stream_operation(
          spec, dir.file("out.npy"), [&](std::uint64_t, std::uint64_t) { ++calls; },
          [&](const Operation&, const RunTiming&) { std::filesystem::resize_file(dir.file("b.npy"), header.size()); },
          kHalvesAlways);
      ADD_FAILURE() << "the run succeeded";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::io) << e.what();
      EXPECT_EQ(std::string(e.what()), "reading '" + dir.file("b.npy") + "': file shrank while reading: expected " +
                                           std::to_string(n * 4) + " bytes of data, found 0");
    }
    EXPECT_EQ(calls, 0);
    EXPECT_EQ(dir.names(), (std::set<std::string>{"a.npy", "b.npy"}));
  }
}

// --in-place writes a new file that replaces A by the same commit: A is read (by both halves)
// from its own file while the result goes to the new one, so the split is safe there too.
TEST(StreamHalvesTest, InPlaceReplacesAWithTheResult) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never two";
  TempDir dir("stream-halves-test");
  const std::uint64_t n = 7 * kChunk + 3;
  const auto a = ramp(n), b = scrambled(n);
  test::write_file(dir.file("a.npy"), test::npy_1d(a));
  test::write_file(dir.file("b.npy"), test::npy_1d(b));
  OperationRequest spec = spec_of(OpKind::bit_xor, {dir.file("a.npy"), dir.file("b.npy")}, 2);
  spec.in_place = true;
  const RunResult r = stream_operation(spec, dir.file("a.npy"), {}, {}, kHalvesAlways);
  EXPECT_TRUE(r.streamed);
  EXPECT_NE(device_text(r.timing.device).find(kHalvesText), std::string::npos) << device_text(r.timing.device);
  std::vector<std::uint32_t> expected(n);
  for (std::uint64_t i = 0; i < n; ++i) expected[i] = a[i] ^ b[i];
  EXPECT_EQ(test::npy_data(test::read_file(dir.file("a.npy"))), test::le_bytes(expected));
  EXPECT_EQ(dir.names(), (std::set<std::string>{"a.npy", "b.npy"}));
}

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
  OperationRequest spec = spec_of(OpKind::bit_not, {"[1, 2]"}, 1);
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

// In a child process (a death test: the interrupt flag stays set), `run` is given a progress
// callback that requests an interrupt on its first call: the run must throw Errc::interrupted
// after that one call and leave only `names` in `dir`.
void expect_clean_interrupt(const TempDir& dir, const std::set<std::string>& names,
                            const std::function<void(const ProgressFn&)>& run) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const auto child = [&] {
    int calls = 0;
    try {
      run([&](std::uint64_t, std::uint64_t) {
        if (++calls == 1) request_interrupt();
      });
    } catch (const Error& e) {
      const bool clean = e.code() == Errc::interrupted && calls == 1 && dir.names() == names;
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

TEST(StreamInterruptDeathTest, AnInterruptBetweenChunksLeavesNothing) {
  TempDir dir("stream-interrupt-test");
  test::write_file(dir.file("a.npy"), test::npy_1d(ramp(4 * kChunk)));
  expect_clean_interrupt(dir, {"a.npy"}, [&](const ProgressFn& progress) {
    stream_operation(spec_of(OpKind::bit_not, {dir.file("a.npy")}, 1), dir.file("out.npy"), progress);
  });
}

// An interrupt (SIGINT's flag) during a halves run: both threads stop at their next chunk, the
// run throws Errc::interrupted once, and nothing is left. The same in seven slices.
TEST(StreamInterruptDeathTest, AnInterruptDuringHalvesLeavesNothing) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one hardware thread: never two";
  for (const unsigned threads : {2u, 7u}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    TempDir dir("stream-interrupt-test");
    test::write_file(dir.file("a.npy"), test::npy_1d(ramp(8 * kChunk)));
    test::write_file(dir.file("b.npy"), test::npy_1d(scrambled(8 * kChunk)));
    expect_clean_interrupt(dir, {"a.npy", "b.npy"}, [&](const ProgressFn& progress) {
      stream_operation(spec_of(OpKind::bit_and, {dir.file("a.npy"), dir.file("b.npy")}, threads), dir.file("out.npy"),
                       progress, {}, kHalvesAlways);
    });
  }
}

}  // namespace
}  // namespace dmlbits
