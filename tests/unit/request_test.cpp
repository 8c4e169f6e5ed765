// The request's hooks and backend reuse (dmlbits/request.hpp): RunHooks::between_chunks splits
// an in-memory run into chunks and may stop that run alone; a BackendCache keeps one backend per
// backend choice; timing_json is the one writer of --time-json's content.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dmlbits/error.hpp"
#include "dmlbits/request.hpp"
#include "run.hpp"

namespace dmlbits {
namespace {

// NOT over `n` borrowed bytes, the result in memory.
OperationRequest not_request(const std::vector<std::uint8_t>& a) {
  OperationRequest r;
  r.face = RequestFace::python;
  r.op = OpKind::bit_not;
  r.backend = BackendKind::cpu;
  r.threads = 1;
  r.output = OutputKind::memory;
  BorrowedTensor t;
  t.dtype = DType::uint8;
  t.shape = Shape{a.size()};
  t.data = reinterpret_cast<const std::byte*>(a.data());
  r.operands.emplace_back(std::move(t));
  return r;
}

// More than one chunk of kInMemoryChunkBytes (a uint8 NOT reads and writes 2 bytes an element).
std::vector<std::uint8_t> two_chunks_and_a_bit() {
  std::vector<std::uint8_t> a(kInMemoryChunkBytes / 2 * 2 + 1000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i * 7);
  return a;
}

TEST(Request, BetweenChunksIsCalledBetweenTheChunksOfAnInMemoryRun) {
  const auto a = two_chunks_and_a_bit();
  int calls = 0;
  RunHooks hooks;
  hooks.between_chunks = [&] { ++calls; };
  const RunResult r = run(prepare_request(not_request(a)), hooks);
  EXPECT_EQ(calls, 2);  // three chunks, nothing after the last
  ASSERT_TRUE(r.result);
  const auto* out = reinterpret_cast<const std::uint8_t*>(r.result->data());
  for (std::size_t i = 0; i < a.size(); i += 4099) ASSERT_EQ(out[i], static_cast<std::uint8_t>(~a[i])) << i;
  EXPECT_EQ(out[a.size() - 1], static_cast<std::uint8_t>(~a[a.size() - 1]));
}

TEST(Request, BetweenChunksCountsRepeatsAndWarmups) {
  const std::vector<std::uint8_t> a(16, 3);
  OperationRequest req = not_request(a);
  req.repeat = 3;
  req.warmup = 2;
  int calls = 0;
  RunHooks hooks;
  hooks.between_chunks = [&] { ++calls; };
  const RunResult r = run(prepare_request(std::move(req)), hooks);
  EXPECT_EQ(calls, 2 + 2);  // after each warm-up, between the measured runs
  EXPECT_EQ(r.execute_samples.size(), 3u);
}

TEST(Request, BetweenChunksStopsOnlyItsOwnRun) {
  const auto a = two_chunks_and_a_bit();
  // One thread's hook throws (its Ctrl-C); another thread's run, at the same time, goes on.
  std::atomic<bool> other_done{false};
  std::thread other([&] {
    RunHooks hooks;
    hooks.between_chunks = [] {};
    const RunResult r = run(prepare_request(not_request(a)), hooks);
    other_done = r.result && reinterpret_cast<const std::uint8_t*>(r.result->data())[5] == static_cast<std::uint8_t>(~a[5]);
  });
  RunHooks stop;
  int calls = 0;
  stop.between_chunks = [&] {
    ++calls;
    throw Error(Errc::interrupted, "interrupted");
  };
  try {
    (void)run(prepare_request(not_request(a)), stop);
    ADD_FAILURE() << "the run was not stopped";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::interrupted);
  }
  EXPECT_EQ(calls, 1);
  other.join();
  EXPECT_TRUE(other_done);
}

TEST(Request, ABackendCacheKeepsOneBackendPerChoice) {
  const std::vector<std::uint8_t> a(16, 3);
  BackendCache cache;
  for (int i = 0; i < 3; ++i) (void)run(prepare_request(not_request(a)), {}, &cache);
  EXPECT_EQ(cache.impl().backends.size(), 1u);
  OperationRequest two = not_request(a);
  two.threads = 2;
  const RunResult r = run(prepare_request(std::move(two)), {}, &cache);
  EXPECT_EQ(cache.impl().backends.size(), 2u);
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(r.result->data())[0], static_cast<std::uint8_t>(~3));
  cache.clear();
  EXPECT_TRUE(cache.impl().backends.empty());
}

TEST(Request, TimingJsonHasTheTimeJsonKeys) {
  const std::vector<std::uint8_t> a(16, 3);
  OperationRequest req = not_request(a);
  req.repeat = 2;
  req.warmup = 1;
  const std::string text = timing_json(run(prepare_request(std::move(req))));
  ASSERT_EQ(text.back(), '\n');
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["op"], "not");
  EXPECT_EQ(j["dtype"], "uint8");
  EXPECT_EQ(j["shape"], nlohmann::json::array({16}));
  EXPECT_EQ(j["execute"]["warmup"], 1);
  EXPECT_EQ(j["execute"]["samples_s"].size(), 2u);
  EXPECT_EQ(j["execute_runs"], 2);
  EXPECT_TRUE(j["phases"].contains("warmup_s"));
}

TEST(Request, PythonTextOperandsAreLiteralsOnly) {
  OperationRequest r;
  r.face = RequestFace::python;
  r.op = OpKind::bit_not;
  r.operands.emplace_back(std::string("a.npy"));
  try {
    (void)prepare_request(r);
    ADD_FAILURE() << "a file name was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_NE(std::string(e.what()).find("operand A: 'a.npy' is not a literal"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dmlbits
