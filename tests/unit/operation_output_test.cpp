// run() (dmlbits/request.hpp, operation_output.cpp): which runs stream, when the target is
// learnt, the order of the callbacks, what is returned, and that the phases include the write
// and add up to the total. The operands are .npy files written here; the CPU backend runs them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <numeric>
#include <string>
#include <vector>

#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "io.hpp"
#include "operation_output.hpp"
#include "stream.hpp"

namespace dmlbits {
namespace {

namespace fs = std::filesystem;

class OperationOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fs::path("dmlbits-operation-output-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string test_read(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A uint8 .npy file of `n` elements, element i = (i * mul + add) mod 256.
  std::string npy(const std::string& name, std::uint64_t n, unsigned mul, unsigned add) const {
    Tensor t(DType::uint8, Shape{n});
    for (std::uint64_t i = 0; i < n; ++i) t.set_bits_at(i, (i * mul + add) & 0xff);
    write_tensor(t.view(), path(name), TensorFormat::npy);
    return path(name);
  }

  // `and` of two files of `n` elements, on the CPU, its result written nowhere.
  OperationRequest and_spec(std::uint64_t n) const {
    OperationRequest spec;
    spec.op = OpKind::bit_and;
    spec.operands = {npy("a.npy", n, 7, 1), npy("b.npy", n, 13, 5)};
    spec.backend = BackendKind::cpu;
    spec.output = OutputKind::none;
    return spec;
  }

  // Whether `t` is the `and` of and_spec's operands.
  static void expect_and(const Tensor& t, std::uint64_t n) { expect_and(t.view(), n); }
  static void expect_and(const TensorView& t, std::uint64_t n) {
    ASSERT_EQ(t.element_count(), n);
    ASSERT_EQ(t.dtype, DType::uint8);
    for (std::uint64_t i = 0; i < n; ++i)
      ASSERT_EQ(std::to_integer<unsigned>(t.data[i]), ((i * 7 + 1) & 0xff) & ((i * 13 + 5) & 0xff)) << "element " << i;
  }

  fs::path dir_;
};

// `spec` written to `path` (as .npy, or as its extension says).
OperationRequest to_file(OperationRequest spec, const std::string& path) {
  spec.output = OutputKind::file;
  spec.path = path;
  return spec;
}

std::vector<std::string> phase_names(const RunTiming& t) {
  std::vector<std::string> names;
  for (const auto& p : t.phases) names.push_back(p.name);
  return names;
}

// The phases are consecutive stretches of the total: their sum is at most the total, and short
// of it only by the instants between them.
void expect_phases_add_up(const RunTiming& t) {
  double sum = 0;
  for (const auto& p : t.phases) {
    EXPECT_GE(p.seconds, 0) << p.name;
    sum += p.seconds;
  }
  EXPECT_LE(sum, t.total_seconds + 1e-9);
  EXPECT_NEAR(sum, t.total_seconds, 0.05);
}

TEST(OutputStreamsTest, StreamsOnlyASingleRunToAnNpyThatNothingKeeps) {
  OperationRequest spec;
  spec.op = OpKind::bit_and;
  spec.operands = {"1", "2"};
  spec = to_file(spec, "out.npy");
  const RunHooks none;
  EXPECT_TRUE(output_streams(prepare_request(spec), none, TensorFormat::npy));
  EXPECT_FALSE(output_streams(prepare_request(spec), none, TensorFormat::json));

  OperationRequest keep = spec;
  keep.keep_result = true;
  EXPECT_FALSE(output_streams(prepare_request(keep), none, TensorFormat::npy));
  RunHooks side;
  side.before_write = [](const Operation&, std::span<const TensorView>) {};
  EXPECT_FALSE(output_streams(prepare_request(spec), side, TensorFormat::npy));
  OperationRequest nowhere = spec;  // no output at all
  nowhere.output = OutputKind::none;
  nowhere.path.clear();
  EXPECT_FALSE(output_streams(prepare_request(nowhere), none, TensorFormat::npy));

  OperationRequest repeat = spec;
  repeat.repeat = 2;
  EXPECT_FALSE(output_streams(prepare_request(repeat), none, TensorFormat::npy));
  OperationRequest warmup = spec;
  warmup.warmup = 1;
  EXPECT_FALSE(output_streams(prepare_request(warmup), none, TensorFormat::npy));
  OperationRequest explain = spec;
  explain.explain_only = true;
  EXPECT_FALSE(output_streams(prepare_request(explain), none, TensorFormat::npy));
}

// Whether the .npy output will be a new file (slices write it at offsets) is learnt with the
// target, before the run: never for standard output or a device, never asked of JSON.
TEST_F(OperationOutputTest, TheTargetSaysWhetherTheOutputIsANewFile) {
  OperationRequest spec;
  spec.op = OpKind::bit_and;
  spec.operands = {"1", "2"};
  EXPECT_TRUE(output_target(to_file(spec, path("out.npy"))).new_file);
  EXPECT_THROW((void)output_target(to_file(spec, path("out"))), Error);
  OperationRequest npy_to_null = to_file(spec, "/dev/null");
  const OutputTarget null_target = output_target(npy_to_null);
  EXPECT_EQ(null_target.format, TensorFormat::npy);
  EXPECT_FALSE(null_target.new_file);
  OperationRequest json = to_file(spec, path("out.json"));
  EXPECT_FALSE(output_target(json).new_file);
  EXPECT_FALSE(writes_in_place(path("absent.npy")));
  EXPECT_TRUE(writes_in_place("-"));
  EXPECT_TRUE(writes_in_place("/dev/null"));
}

// A streamed run takes its backend from the cache, as an in-memory one does.
TEST_F(OperationOutputTest, AStreamedRunUsesTheBackendCache) {
  BackendCache cache;
  const OperationRequest spec = to_file(and_spec(1000), path("out.npy"));
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(run(prepare_request(spec), {}, &cache).streamed);
  ASSERT_EQ(cached_backends(cache).backends.size(), 1u);
  EXPECT_EQ(cached_backends(cache).backends[0].validated.size(), 1u);
  expect_and(read_tensor(path("out.npy")).tensor, 1000);
}

TEST_F(OperationOutputTest, StreamsToAnNpyInChunksAndTimesTheWrite) {
  const std::uint64_t n = 3 * (kStreamChunkBytes) + 100;  // four chunks, the last short
  const std::string out = path("out.npy");
  const OperationRequest spec = to_file(and_spec(n), out);
  int validated = 0;
  std::uint64_t last_done = 0;
  RunHooks hooks;
  hooks.on_validated = [&](const Operation& v, const RunTiming& t) {
    ++validated;
    EXPECT_EQ(v.summary().output_shape, Shape{n});
    EXPECT_EQ(t.backend, "cpu");
    EXPECT_FALSE(fs::exists(out)) << "on_validated runs before the output is created";
  };
  hooks.progress = [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(total, n);
    EXPECT_GT(done, last_done);
    last_done = done;
  };
  const RunResult r = run(prepare_request(spec), hooks);
  EXPECT_TRUE(r.streamed);
  EXPECT_EQ(validated, 1);
  EXPECT_EQ(last_done, n);
  ASSERT_TRUE(r.op);
  EXPECT_FALSE(r.result.has_value());
  EXPECT_EQ(phase_names(r.timing), (std::vector<std::string>{"read", "backend", "validate", "execute", "write"}));
  ASSERT_EQ(r.execute_samples.size(), 1u);
  EXPECT_EQ(r.execute_samples[0], r.timing.phase("execute"));
  expect_phases_add_up(r.timing);
  expect_and(read_tensor(out).tensor, n);
}

TEST_F(OperationOutputTest, KeepsTheResultInMemoryAndStillWritesIt) {
  const std::string out = path("out.npy");
  OperationRequest spec = to_file(and_spec(1000), out);
  spec.keep_result = true;
  const RunResult r = run(prepare_request(spec));
  EXPECT_FALSE(r.streamed);
  ASSERT_TRUE(r.result.has_value());
  expect_and(*r.result, 1000);
  expect_and(read_tensor(out).tensor, 1000);
  EXPECT_EQ(phase_names(r.timing),
            (std::vector<std::string>{"read", "backend", "validate", "allocate", "execute", "write"}));
  expect_phases_add_up(r.timing);
}

TEST_F(OperationOutputTest, WritesJsonFromMemory) {
  const std::string out = path("out.json");
  OperationRequest spec = to_file(and_spec(10), out);
  spec.hex = true;
  const RunResult r = run(prepare_request(spec));
  EXPECT_FALSE(r.streamed);
  EXPECT_FALSE(r.result.has_value());  // not asked for
  const LoadedTensor written = read_tensor(out);
  EXPECT_EQ(written.format, TensorFormat::json);
  expect_and(written.tensor, 10);
  EXPECT_NE(test_read(out).find("\"0x"), std::string::npos);  // hex, as asked
  EXPECT_EQ(r.timing.phases.back().name, "write");
}

TEST_F(OperationOutputTest, RepeatsInMemoryWithASamplePerRun) {
  OperationRequest spec = and_spec(100);
  spec.repeat = 3;
  spec.warmup = 2;
  spec.keep_result = true;  // as --expect without -o: written nowhere
  const RunResult r = run(prepare_request(spec));
  EXPECT_FALSE(r.streamed);
  EXPECT_EQ(r.execute_samples.size(), 3u);
  EXPECT_EQ(r.timing.execute_runs, 3);
  EXPECT_EQ(r.warmup, 2);
  EXPECT_EQ(phase_names(r.timing),
            (std::vector<std::string>{"read", "backend", "validate", "allocate", "warmup", "execute", "write"}));
  expect_phases_add_up(r.timing);
  ASSERT_TRUE(r.result.has_value());
  expect_and(*r.result, 100);
}

TEST_F(OperationOutputTest, BeforeWriteSeesTheInputsBeforeTheOutputExists) {
  OperationRequest spec = and_spec(100);
  spec.output = OutputKind::automatic;
  spec.in_place = true;
  const std::string a = std::get<std::string>(spec.operands[0]);
  std::vector<std::string> calls;
  RunHooks hooks;
  hooks.before_write = [&](const Operation&, std::span<const TensorView> inputs) {
    calls.push_back("before_write");
    ASSERT_EQ(inputs.size(), 2u);
    // In place, the run's result replaced A in memory, but A's file still holds A.
    expect_and(inputs[0], 100);
    EXPECT_EQ(read_tensor(a).tensor.bits_at(3), (3 * 7 + 1) & 0xff);
  };
  hooks.on_validated = [&](const Operation&, const RunTiming&) {
    calls.push_back("on_validated");
    EXPECT_EQ(read_tensor(a).tensor.bits_at(3), (3 * 7 + 1) & 0xff);  // the target comes after
  };
  spec.keep_result = true;
  const RunResult r = run(prepare_request(spec), hooks);
  EXPECT_FALSE(r.streamed);
  EXPECT_EQ(calls, (std::vector<std::string>{"before_write", "on_validated"}));
  ASSERT_TRUE(r.result.has_value());
  expect_and(*r.result, 100);
  expect_and(read_tensor(a).tensor, 100);
}

TEST_F(OperationOutputTest, AsksForAStreamableTargetBeforeReading) {
  OperationRequest spec;
  spec.op = OpKind::bit_and;
  spec.operands = {path("missing.npy"), "1"};
  spec = to_file(spec, path("out.unknown"));  // a target run() refuses: no format to tell
  // (The library's own words: the option by its keyword, which each face spells its way.)
  const std::string no_target =
      "cannot tell the output format from '" + path("out.unknown") + "': name it .npy or .json, or use format";
  try {
    run(prepare_request(spec));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), no_target);  // the target's refusal, not the missing file
  }
  // A run that cannot stream reads first, and asks for its target only after the run.
  spec.repeat = 2;
  try {
    run(prepare_request(spec));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()), no_target);
    EXPECT_EQ(e.code(), Errc::io);
  }
}

TEST_F(OperationOutputTest, ExplainOnlyValidatesAndWritesNothing) {
  const std::string out = path("out.npy");
  OperationRequest spec = to_file(and_spec(100), out);
  spec.explain_only = true;
  int before_write = 0, others = 0;
  RunHooks hooks;
  hooks.on_validated = [&](const Operation&, const RunTiming&) { ++others; };
  hooks.before_write = [&](const Operation&, std::span<const TensorView> inputs) {
    ++before_write;
    EXPECT_EQ(inputs.size(), 2u);
  };
  const RunResult r = run(prepare_request(spec), hooks);
  EXPECT_EQ(before_write, 1);
  EXPECT_EQ(others, 0);
  ASSERT_TRUE(r.op);
  EXPECT_FALSE(r.result.has_value());
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(phase_names(r.timing), (std::vector<std::string>{"read", "backend", "validate"}));
}

}  // namespace
}  // namespace dmlbits
