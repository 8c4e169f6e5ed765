// run_to_output (dmlbits/operation_output.hpp): which runs stream, when the target is asked
// for, the order of the callbacks, what is returned, and that the phases include the write and
// add up to the total. The operands are .npy files written here; the CPU backend runs them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "dmlbits/error.hpp"
#include "dmlbits/io.hpp"
#include "operation_output.hpp"

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

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A uint8 .npy file of `n` elements, element i = (i * mul + add) mod 256.
  std::string npy(const std::string& name, std::uint64_t n, unsigned mul, unsigned add) const {
    Tensor t(DType::uint8, Shape{n});
    for (std::uint64_t i = 0; i < n; ++i) t.set_bits_at(i, (i * mul + add) & 0xff);
    write_tensor(t.view(), path(name), TensorFormat::npy);
    return path(name);
  }

  // `and` of two files of `n` elements.
  OperationSpec and_spec(std::uint64_t n) const {
    OperationSpec spec;
    spec.op = OpKind::bit_and;
    spec.operands = {npy("a.npy", n, 7, 1), npy("b.npy", n, 13, 5)};
    return spec;
  }

  // Whether `t` is the `and` of and_spec's operands.
  static void expect_and(const Tensor& t, std::uint64_t n) {
    ASSERT_EQ(t.element_count(), n);
    for (std::uint64_t i = 0; i < n; ++i)
      ASSERT_EQ(t.bits_at(i), ((i * 7 + 1) & 0xff) & ((i * 13 + 5) & 0xff)) << "element " << i;
  }

  fs::path dir_;
};

OutputTarget npy_target(const std::string& path) { return {path, TensorFormat::npy}; }

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
  OperationSpec spec;
  OutputRequest request;
  request.target = [] { return npy_target("out.npy"); };
  EXPECT_TRUE(output_streams(spec, request, TensorFormat::npy));
  EXPECT_FALSE(output_streams(spec, request, TensorFormat::json));

  OutputRequest keep = request;
  keep.keep_result = true;
  EXPECT_FALSE(output_streams(spec, keep, TensorFormat::npy));
  OutputRequest side = request;
  side.before_write = [](const OperationResult&) {};
  EXPECT_FALSE(output_streams(spec, side, TensorFormat::npy));
  EXPECT_FALSE(output_streams(spec, OutputRequest{}, TensorFormat::npy));  // no output at all

  OperationSpec repeat = spec;
  repeat.repeat = 2;
  EXPECT_FALSE(output_streams(repeat, request, TensorFormat::npy));
  OperationSpec warmup = spec;
  warmup.warmup = 1;
  EXPECT_FALSE(output_streams(warmup, request, TensorFormat::npy));
  OperationSpec explain = spec;
  explain.explain_only = true;
  EXPECT_FALSE(output_streams(explain, request, TensorFormat::npy));
}

TEST_F(OperationOutputTest, StreamsToAnNpyInChunksAndTimesTheWrite) {
  const std::uint64_t n = 3 * (kStreamChunkBytes) + 100;  // four chunks, the last short
  const OperationSpec spec = and_spec(n);
  const std::string out = path("out.npy");
  int targets = 0, validated = 0;
  std::uint64_t last_done = 0;
  OutputRequest request;
  request.target = [&] {
    ++targets;
    return npy_target(out);
  };
  request.on_validated = [&](const ValidatedOp& v, const RunTiming& t) {
    ++validated;
    EXPECT_EQ(v.output_shape(), Shape{n});
    EXPECT_EQ(t.backend, "cpu");
    EXPECT_FALSE(fs::exists(out)) << "on_validated runs before the output is created";
  };
  request.progress = [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(total, n);
    EXPECT_GT(done, last_done);
    last_done = done;
  };
  const OutputRun r = run_to_output(spec, request);
  EXPECT_TRUE(r.streamed);
  EXPECT_EQ(targets, 1);
  EXPECT_EQ(validated, 1);
  EXPECT_EQ(last_done, n);
  ASSERT_NE(r.op, nullptr);
  EXPECT_FALSE(r.result.has_value());
  EXPECT_EQ(phase_names(r.timing), (std::vector<std::string>{"read", "backend", "validate", "execute", "write"}));
  ASSERT_EQ(r.execute_samples.size(), 1u);
  EXPECT_EQ(r.execute_samples[0], r.timing.phase("execute"));
  expect_phases_add_up(r.timing);
  expect_and(read_tensor(out).tensor, n);
}

TEST_F(OperationOutputTest, KeepsTheResultInMemoryAndStillWritesIt) {
  const OperationSpec spec = and_spec(1000);
  const std::string out = path("out.npy");
  OutputRequest request;
  request.target = [&] { return npy_target(out); };
  request.keep_result = true;
  const OutputRun r = run_to_output(spec, request);
  EXPECT_FALSE(r.streamed);
  ASSERT_TRUE(r.result.has_value());
  expect_and(*r.result, 1000);
  expect_and(read_tensor(out).tensor, 1000);
  EXPECT_EQ(phase_names(r.timing),
            (std::vector<std::string>{"read", "backend", "validate", "allocate", "execute", "write"}));
  expect_phases_add_up(r.timing);
}

TEST_F(OperationOutputTest, WritesJsonFromMemory) {
  const OperationSpec spec = and_spec(10);
  const std::string out = path("out.json");
  OutputRequest request;
  request.target = [&] { return OutputTarget{out, TensorFormat::json, JsonWriteOptions{true}}; };
  const OutputRun r = run_to_output(spec, request);
  EXPECT_FALSE(r.streamed);
  EXPECT_FALSE(r.result.has_value());  // not asked for
  const LoadedTensor written = read_tensor(out);
  EXPECT_EQ(written.format, TensorFormat::json);
  expect_and(written.tensor, 10);
  EXPECT_EQ(r.timing.phases.back().name, "write");
}

TEST_F(OperationOutputTest, RepeatsInMemoryWithASamplePerRun) {
  OperationSpec spec = and_spec(100);
  spec.repeat = 3;
  spec.warmup = 2;
  OutputRequest request;
  request.keep_result = true;  // as --expect without -o: written nowhere
  const OutputRun r = run_to_output(spec, request);
  EXPECT_FALSE(r.streamed);
  EXPECT_EQ(r.execute_samples.size(), 3u);
  EXPECT_EQ(r.timing.execute_runs, 3);
  EXPECT_EQ(phase_names(r.timing),
            (std::vector<std::string>{"read", "backend", "validate", "allocate", "warmup", "execute", "write"}));
  expect_phases_add_up(r.timing);
  ASSERT_TRUE(r.result.has_value());
  expect_and(*r.result, 100);
}

TEST_F(OperationOutputTest, BeforeWriteSeesTheInputsBeforeTheOutputExists) {
  OperationSpec spec = and_spec(100);
  spec.in_place = true;
  const std::string a = std::get<std::string>(spec.operands[0]);
  std::vector<std::string> calls;
  OutputRequest request;
  request.target = [&] {
    calls.push_back("target");
    return npy_target(a);
  };
  request.before_write = [&](const OperationResult& m) {
    calls.push_back("before_write");
    ASSERT_EQ(m.inputs.size(), 2u);
    // In place, the run's result replaced A in memory, but A's file still holds A.
    expect_and(m.inputs[0].tensor, 100);
    EXPECT_EQ(read_tensor(a).tensor.bits_at(3), (3 * 7 + 1) & 0xff);
  };
  request.on_validated = [&](const ValidatedOp&, const RunTiming&) { calls.push_back("on_validated"); };
  request.keep_result = true;
  const OutputRun r = run_to_output(spec, request);
  EXPECT_FALSE(r.streamed);
  EXPECT_EQ(calls, (std::vector<std::string>{"before_write", "on_validated", "target"}));
  ASSERT_TRUE(r.result.has_value());
  expect_and(*r.result, 100);
  expect_and(read_tensor(a).tensor, 100);
}

TEST_F(OperationOutputTest, AsksForAStreamableTargetBeforeReading) {
  OperationSpec spec;
  spec.op = OpKind::bit_and;
  spec.operands = {path("missing.npy"), "1"};
  OutputRequest request;
  request.target = [] () -> OutputTarget { throw Error(Errc::usage, "no target"); };
  try {
    run_to_output(spec, request);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "no target");  // the target's refusal, not the missing file
  }
  // A run that cannot stream reads first, and asks for its target only after the run.
  spec.repeat = 2;
  try {
    run_to_output(spec, request);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()), "no target");
  }
}

TEST_F(OperationOutputTest, ExplainOnlyValidatesAndWritesNothing) {
  OperationSpec spec = and_spec(100);
  spec.explain_only = true;
  const std::string out = path("out.npy");
  int before_write = 0, others = 0;
  OutputRequest request;
  request.target = [&] {
    ++others;
    return npy_target(out);
  };
  request.on_validated = [&](const ValidatedOp&, const RunTiming&) { ++others; };
  request.before_write = [&](const OperationResult& m) {
    ++before_write;
    EXPECT_EQ(m.inputs.size(), 2u);
  };
  const OutputRun r = run_to_output(spec, request);
  EXPECT_EQ(before_write, 1);
  EXPECT_EQ(others, 0);
  ASSERT_NE(r.op, nullptr);
  EXPECT_FALSE(r.result.has_value());
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(phase_names(r.timing), (std::vector<std::string>{"read", "backend", "validate"}));
}

}  // namespace
}  // namespace dmlbits
