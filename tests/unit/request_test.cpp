// The request's hooks and backend reuse (dmlbits/request.hpp): RunHooks::between_chunks splits
// an in-memory run into chunks and may stop that run alone; a BackendCache keeps one backend per
// backend choice; timing_json is the one writer of --time-json's content.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "dmlbits/error.hpp"
#include "dmlbits/request.hpp"
#include "run.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

// NOT over `n` borrowed bytes, the result in memory.
OperationRequest not_request(const std::vector<std::uint8_t>& a) {
  OperationRequest r;
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
    other_done =
        r.result && reinterpret_cast<const std::uint8_t*>(r.result->data())[5] == static_cast<std::uint8_t>(~a[5]);
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
  EXPECT_EQ(cached_backends(cache).backends.size(), 1u);
  OperationRequest two = not_request(a);
  two.threads = 2;
  const RunResult r = run(prepare_request(std::move(two)), {}, &cache);
  EXPECT_EQ(cached_backends(cache).backends.size(), 2u);
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(r.result->data())[0], static_cast<std::uint8_t>(~3));
  cache.clear();
  EXPECT_TRUE(cached_backends(cache).backends.empty());
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

TEST(Request, ATextOperandIsWhatTheCommandLineMakesOfIt) {
  // The library reads text operands as the command line does, for every face (Python refuses
  // file names itself: its text operands are literals only).
  OperationRequest r;
  r.op = OpKind::bit_not;
  r.operands.emplace_back(std::string("no-such-file-dmlbits.npy"));
  try {
    (void)run(prepare_request(r));
    ADD_FAILURE() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::io) << e.what();
  }
}

// AND of two borrowed uint8 tensors (dtypes may differ, to be refused), through `cache`.
RunResult run_and(BackendCache& cache, const std::vector<std::uint8_t>& a, Shape a_shape, DType b_dtype, Shape b_shape,
                  std::optional<FeatureLevel> level = std::nullopt) {
  OperationRequest r;
  r.op = OpKind::bit_and;
  r.backend = BackendKind::cpu;
  r.level = level;
  r.output = OutputKind::memory;
  r.timing = false;
  r.operands.emplace_back(
      BorrowedTensor{DType::uint8, a_shape, {}, reinterpret_cast<const std::byte*>(a.data()), nullptr});
  r.operands.emplace_back(BorrowedTensor{b_dtype, b_shape, {}, reinterpret_cast<const std::byte*>(a.data()), nullptr});
  return run(prepare_request(std::move(r)), {}, &cache);
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(errc_info(e.code()).name) + ": " + e.what();
  }
  return "(no error)";
}

// The cache keeps what a backend validated, keyed by everything validate() reads: the same
// operation on the same dtypes and shapes shares the validated operation; any difference (a
// shape, a dtype, the level) is validated afresh, and refusals are never kept.
TEST(Request, ABackendCacheKeepsValidatedOperationsButNoRefusals) {
  const std::vector<std::uint8_t> a{1, 2, 3, 0xff, 5, 6, 7, 8};
  BackendCache cache;
  const RunResult first = run_and(cache, a, Shape{8}, DType::uint8, Shape{8});
  const RunResult again = run_and(cache, a, Shape{8}, DType::uint8, Shape{8});
  EXPECT_EQ(&validated(first.op), &validated(again.op));
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(again.result->data())[3], 0xff);
  const RunResult other_shape = run_and(cache, a, Shape{2, 4}, DType::uint8, Shape{4});
  EXPECT_NE(&validated(other_shape.op), &validated(first.op));
  EXPECT_EQ(other_shape.op.summary().output_shape, (Shape{2, 4}));
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(other_shape.result->data())[7], 0xff & 8);

  // The same refusal twice, word for word, also after the same operands were accepted.
  const std::string mixed =
      "invalid-input: and: the inputs have different data types (UINT8 and UINT16); DirectML requires one type";
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(refusal([&] { (void)run_and(cache, a, Shape{4}, DType::uint16, Shape{2}); }), mixed);
  const std::string shapes = "invalid-input: and: shapes (8,) and (3,) cannot be broadcast together";
  for (int i = 0; i < 2; ++i)
    EXPECT_EQ(refusal([&] { (void)run_and(cache, a, Shape{8}, DType::uint8, Shape{3}); }), shapes);
  EXPECT_EQ(cached_backends(cache).backends.size(), 1u);
}

// Without timing nothing is measured and no backend text is made; with it (the default) the
// phases and texts are there as before.
TEST(Request, WithoutTimingNothingIsMeasured) {
  const std::vector<std::uint8_t> a(16, 3);
  OperationRequest quiet = not_request(a);
  quiet.timing = false;
  quiet.repeat = 3;
  const RunResult q = run(prepare_request(std::move(quiet)));
  EXPECT_EQ(reinterpret_cast<const std::uint8_t*>(q.result->data())[15], static_cast<std::uint8_t>(~3));
  EXPECT_TRUE(q.timing.phases.empty());
  EXPECT_TRUE(q.execute_samples.empty());
  EXPECT_EQ(q.timing.device.kind, DeviceKind::none);
  EXPECT_EQ(q.timing.execute_runs, 3);

  const RunResult t = run(prepare_request(not_request(a)));
  std::vector<std::string> names;
  for (const auto& p : t.timing.phases) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"read", "backend", "validate", "allocate", "execute", "write"}));
  EXPECT_EQ(t.execute_samples.size(), 1u);
  EXPECT_EQ(t.timing.backend, "cpu");
  EXPECT_NE(t.timing.device.kind, DeviceKind::none);
}

// prepare_request refuses an option as data, in no face's words: which option, which rule,
// the value (each face's words for them: option_error_test.cpp, tests/cli/option_rules.sh,
// tests/python/test_errors.py).
TEST(Request, RefusalsSayWhichOptionAndRule) {
  const std::vector<std::uint8_t> a(4, 1);
  struct Refused {
    OptionKey key;
    OptionRule rule;
    std::string value, subject;
  };
  const auto refused = [&](auto change) -> std::optional<Refused> {
    OperationRequest r = not_request(a);
    change(r);
    try {
      (void)prepare_request(std::move(r));
    } catch (const OptionError& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      return Refused{e.key(), e.rule(), e.value(), e.subject()};
    }
    ADD_FAILURE() << "accepted";
    return std::nullopt;
  };
  const auto expect = [&](auto change, OptionKey key, OptionRule rule, const std::string& value,
                          const std::string& subject) {
    const auto e = refused(change);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->key, key);
    EXPECT_EQ(e->rule, rule);
    EXPECT_EQ(e->value, value);
    EXPECT_EQ(e->subject, subject);
  };
  expect([](OperationRequest& r) { r.threads = 300; }, OptionKey::threads, OptionRule::above_maximum, "300", "256");
  expect([](OperationRequest& r) { r.threads = 0; }, OptionKey::threads, OptionRule::zero, "0", "256");
  expect([](OperationRequest& r) { r.adapter = "0"; }, OptionKey::adapter, OptionRule::not_for_backend, "0", "cpu");
  expect(
      [](OperationRequest& r) {
        r.backend = BackendKind::d3d12;
        r.threads = 2;
      },
      OptionKey::threads, OptionRule::not_for_backend, "2", "d3d12");
  expect([](OperationRequest& r) { r.repeat = 0; }, OptionKey::repeat, OptionRule::too_few, "0", "");
  expect([](OperationRequest& r) { r.warmup = -1; }, OptionKey::warmup, OptionRule::too_few, "-1", "");
  std::vector<std::uint8_t> writable(4, 1);
  expect(
      [&](OperationRequest& r) {
        std::get<BorrowedTensor>(r.operands[0]).writable = reinterpret_cast<std::byte*>(writable.data());
        r.in_place = true;
        r.output = OutputKind::none;
        r.warmup = 1;
      },
      OptionKey::in_place, OptionRule::runs_once, "", "");
  expect(
      [](OperationRequest& r) {
        r.backend = BackendKind::automatic;
        r.threads.reset();
        r.adapter = "";
      },
      OptionKey::adapter, OptionRule::empty, "", "");
  expect([](OperationRequest& r) { r.out_dtype = DType::uint32; }, OptionKey::out_dtype, OptionRule::not_for_operator,
         "uint32", "not");
  expect([](OperationRequest& r) { r.shift_overflow = ShiftOverflow::wrap; }, OptionKey::shift_overflow,
         OptionRule::not_for_operator, "wrap", "not");
  // The operators that take them, from the operator table.
  OperationRequest r = not_request(a);
  r.out_dtype = DType::uint32;
  try {
    (void)prepare_request(std::move(r));
    ADD_FAILURE() << "accepted";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.choices(), (std::vector<std::string>{"popcount"}));
  }
}

// AND of two borrowed uint8 tensors of `shape`, in memory, without timing: a request a plan covers.
OperationRequest plannable_and(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b, Shape shape) {
  OperationRequest r;
  r.op = OpKind::bit_and;
  r.backend = BackendKind::cpu;
  r.output = OutputKind::memory;
  r.timing = false;
  r.operands.emplace_back(
      BorrowedTensor{DType::uint8, shape, {}, reinterpret_cast<const std::byte*>(a.data()), nullptr});
  r.operands.emplace_back(
      BorrowedTensor{DType::uint8, shape, {}, reinterpret_cast<const std::byte*>(b.data()), nullptr});
  return r;
}

BorrowedTensor borrowed(const std::vector<std::uint8_t>& v, Shape shape, DType dtype = DType::uint8) {
  return BorrowedTensor{dtype, shape, {}, reinterpret_cast<const std::byte*>(v.data()), nullptr};
}

// A plan computes what run() computes, on new operands of the same dtypes and shapes, and fits
// nothing else: another shape, dtype, layout or output goes back to run() (which words any
// refusal).
TEST(RequestPlan, RunsWhatRunRunsOnOperandsLikeTheFirst) {
  const std::vector<std::uint8_t> a{1, 2, 3, 0xff, 5, 6, 7, 8}, b{0xff, 0xf0, 0x0f, 0x55, 1, 1, 1, 1};
  BackendCache cache;
  const PreparedRequest p = prepare_request(plannable_and(a, b, Shape{2, 4}));
  const RunResult first = run(p, {}, &cache);
  std::optional<OperationPlan> plan = plan_operation(p, cache);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->output_dtype(), DType::uint8);
  EXPECT_EQ(plan->output_shape(), (Shape{2, 4}));
  EXPECT_EQ(&validated(plan->op()), &validated(first.op));  // validated once, shared with the cache

  const std::vector<std::uint8_t> c{0x81, 0x42, 0x24, 0x18, 0xff, 0xfe, 0xfd, 0xfc};
  std::vector<std::uint8_t> out(8, 0);
  const MutableTensorView to{DType::uint8, Shape{2, 4}, reinterpret_cast<std::byte*>(out.data())};
  const std::vector<BorrowedTensor> operands{borrowed(c, Shape{2, 4}), borrowed(b, Shape{2, 4})};
  const OptionVariables now = read_option_variables();  // as prepare_request read them
  ASSERT_TRUE(plan->fits(operands, to, now));
  plan->run(operands, to);
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], c[i] & b[i]) << i;

  const std::vector<std::uint16_t> wide(8, 1);
  EXPECT_FALSE(plan->fits(std::vector{borrowed(c, Shape{8}), borrowed(b, Shape{8})},
                          MutableTensorView{DType::uint8, Shape{8}, to.data}, now));
  EXPECT_FALSE(plan->fits(std::vector{borrowed(c, Shape{2, 4}), borrowed(b, Shape{2, 4}, DType::int8)}, to, now));
  EXPECT_FALSE(plan->fits(std::vector{borrowed(c, Shape{2, 4})}, to, now));
  EXPECT_FALSE(plan->fits(operands, MutableTensorView{DType::int8, Shape{2, 4}, to.data}, now));
  EXPECT_FALSE(plan->fits(operands, MutableTensorView{DType::uint8, Shape{4, 2}, to.data}, now));
  BorrowedTensor strided = borrowed(c, Shape{2, 4});
  strided.strides = {1, 2};
  EXPECT_FALSE(plan->fits(std::vector{strided, borrowed(b, Shape{2, 4})}, to, now));
  BorrowedTensor swapped = borrowed(c, Shape{2, 4});
  swapped.byte_swapped = true;
  EXPECT_FALSE(plan->fits(std::vector{swapped, borrowed(b, Shape{2, 4})}, to, now));
}

// A kept plan's run with its kernel and loop chosen when it was made: broadcast operands (B one
// row repeated, B one element), a unary operator, and an expression whose literal is a
// constant of its one node, each run twice on new operands. Expected values by hand.
TEST(RequestPlan, PreparedRunsOfBroadcastsUnaryOperatorsAndLiterals) {
  BackendCache cache;
  const auto planned = [&](OperationRequest r) {
    const PreparedRequest p = prepare_request(std::move(r));
    (void)run(p, {}, &cache);
    std::optional<OperationPlan> plan = plan_operation(p, cache);
    EXPECT_TRUE(plan);
    return plan;
  };
  const std::vector<std::uint8_t> a{1, 2, 3, 0xff, 5, 6, 7, 8}, row{0x0f, 0xf0, 0x33, 0x01};
  std::vector<std::uint8_t> out(8, 0);
  const MutableTensorView to{DType::uint8, Shape{2, 4}, reinterpret_cast<std::byte*>(out.data())};

  OperationRequest rows = plannable_and(a, row, Shape{2, 4});
  std::get<BorrowedTensor>(rows.operands[1]).shape = Shape{4};
  const auto by_row = planned(std::move(rows));
  ASSERT_TRUE(by_row);
  for (const int k : {0, 0x10}) {
    std::vector<std::uint8_t> c = a;
    for (auto& x : c) x = static_cast<std::uint8_t>(x + k);
    const std::vector<BorrowedTensor> operands{borrowed(c, Shape{2, 4}), borrowed(row, Shape{4})};
    ASSERT_TRUE(by_row->fits(operands, to));
    by_row->run(operands, to);
    for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], c[i] & row[i % 4]) << i;
  }

  OperationRequest one = plannable_and(a, row, Shape{2, 4});
  one.op = OpKind::bit_or;
  std::get<BorrowedTensor>(one.operands[1]).shape = Shape{};
  const auto by_one = planned(std::move(one));
  ASSERT_TRUE(by_one);
  const std::vector<std::uint8_t> forty{0x40};
  const std::vector<BorrowedTensor> with_forty{borrowed(a, Shape{2, 4}), borrowed(forty, Shape{})};
  ASSERT_TRUE(by_one->fits(with_forty, to));
  by_one->run(with_forty, to);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{0x41, 0x42, 0x43, 0xff, 0x45, 0x46, 0x47, 0x48}));

  OperationRequest inverted = plannable_and(a, row, Shape{2, 4});
  inverted.op = OpKind::bit_not;
  inverted.operands.pop_back();
  const auto inverting = planned(std::move(inverted));
  ASSERT_TRUE(inverting);
  const std::vector<BorrowedTensor> just_a{borrowed(a, Shape{2, 4})};
  ASSERT_TRUE(inverting->fits(just_a, to));
  inverting->run(just_a, to);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{0xfe, 0xfd, 0xfc, 0x00, 0xfa, 0xf9, 0xf8, 0xf7}));

  OperationRequest literal = plannable_and(a, row, Shape{2, 4});
  literal.expression = "x ^ 0x0f";
  literal.names = {"x"};
  literal.operands.pop_back();
  const auto xoring = planned(std::move(literal));
  ASSERT_TRUE(xoring);
  ASSERT_TRUE(xoring->fits(just_a, to));
  xoring->run(just_a, to);
  EXPECT_EQ(out, (std::vector<std::uint8_t>{0x0e, 0x0d, 0x0c, 0xf0, 0x0a, 0x09, 0x08, 0x07}));
}

// Requests a plan does not cover get none: run() is their only path.
TEST(RequestPlan, OnlyForSmallInMemoryRunsOfBorrowedTensors) {
  const std::vector<std::uint8_t> a(8, 3), b(8, 5);
  BackendCache cache;
  const auto plan_of = [&](const std::function<void(OperationRequest&)>& change) {
    OperationRequest r = plannable_and(a, b, Shape{8});
    change(r);
    return plan_operation(prepare_request(std::move(r)), cache).has_value();
  };
  EXPECT_TRUE(plan_of([](OperationRequest&) {}));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { r.timing = true; }));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { r.repeat = 2; }));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { r.explain_only = true; }));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { r.keep_result = true; }));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { r.output = OutputKind::none; }));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { r.operands[1] = std::string("5"); }));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { std::get<BorrowedTensor>(r.operands[0]).strides = {1}; }));
  EXPECT_FALSE(plan_of([](OperationRequest& r) { std::get<BorrowedTensor>(r.operands[0]).byte_swapped = true; }));
}

// Borrowed operands in another layout or byte order: converted chunk by chunk as the run goes
// (one untimed execution), or whole first (timed); the same values either way, written to the
// memory RunHooks::allocate_result gives, and Ctrl-C's hook called between chunks. Expected
// values by hand: element i of A is i, stored big-endian at every third place; B is 0x00ff,
// read backwards.
TEST(RequestConversion, StridedAndSwappedOperandsAsRead) {
  constexpr std::size_t n = 100000;  // uint16: several 64 KiB conversion chunks
  std::vector<std::uint16_t> a(3 * n, 0xeeee), b(n, 0x00ff);
  for (std::size_t i = 0; i < n; ++i) a[3 * i] = static_cast<std::uint16_t>(((i & 0xff) << 8) | ((i >> 8) & 0xff));
  for (const bool timed : {false, true}) {
    OperationRequest r;
    r.op = OpKind::bit_xor;
    r.backend = BackendKind::cpu;
    r.output = OutputKind::memory;
    r.timing = timed;
    BorrowedTensor ta{DType::uint16, Shape{n}, {6}, reinterpret_cast<const std::byte*>(a.data()), nullptr};
    ta.byte_swapped = true;
    BorrowedTensor tb{DType::uint16, Shape{n}, {-2}, reinterpret_cast<const std::byte*>(b.data() + n - 1), nullptr};
    r.operands = {ta, tb};
    std::vector<std::uint16_t> out(n, 0);
    int allocated = 0, checks = 0;
    RunHooks hooks;
    hooks.allocate_result = [&](DType d, const Shape& shape) {
      ++allocated;
      EXPECT_EQ(d, DType::uint16);
      EXPECT_EQ(shape, Shape{n});
      return MutableTensorView{d, shape, reinterpret_cast<std::byte*>(out.data())};
    };
    hooks.between_chunks = [&] { ++checks; };
    const RunResult result = run(prepare_request(std::move(r)), hooks);
    EXPECT_EQ(allocated, 1);
    EXPECT_FALSE(result.result);  // the result is in the hook's memory
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(out[i], static_cast<std::uint16_t>(i ^ 0x00ff)) << i << (timed ? " timed" : " in chunks");
    EXPECT_EQ(checks, 0);  // 400 KB of work: under one check's worth (kInMemoryChunkBytes)
  }
}

// DMLBITS_THREADS and DMLBITS_ISA are read once per request, by prepare_request: each new
// request sees the variables as they are (also through a BackendCache: a changed variable gets a
// backend made under it, as a new process would), and a prepared request keeps what it read.
class RequestEnvironment : public test::IsaOverrideFixture {
 protected:
  void SetUp() override {
    IsaOverrideFixture::SetUp();
    if (const char* v = std::getenv("DMLBITS_THREADS")) threads_ = v;
    ::unsetenv("DMLBITS_THREADS");
  }
  void TearDown() override {
    if (threads_) ::setenv("DMLBITS_THREADS", threads_->c_str(), 1);
    else ::unsetenv("DMLBITS_THREADS");
    IsaOverrideFixture::TearDown();
  }
  std::optional<std::string> threads_;
};

TEST_F(RequestEnvironment, AChangedVariableIsHonouredByTheNextRequest) {
  const std::vector<std::uint8_t> a(8, 3), b(8, 5);
  BackendCache cache;
  // The request with its thread count left to DMLBITS_THREADS (and its instruction set to
  // DMLBITS_ISA); timed, so that the device it ran on can be read.
  const auto left_to_variables = [&](bool timing) {
    OperationRequest r = plannable_and(a, b, Shape{8});
    r.threads.reset();
    r.timing = timing;
    return prepare_request(std::move(r));
  };
  const std::vector<std::uint8_t> c(8, 6);
  std::vector<std::uint8_t> out(8, 0);
  const MutableTensorView to{DType::uint8, Shape{8}, reinterpret_cast<std::byte*>(out.data())};
  const std::vector<BorrowedTensor> operands{borrowed(c, Shape{8}), borrowed(b, Shape{8})};
  const PreparedRequest first = left_to_variables(false);
  (void)run(first, {}, &cache);
  EXPECT_EQ(cached_backends(cache).backends.size(), 1u);
  const std::optional<OperationPlan> plan = plan_operation(first, cache);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->fits(operands, to, read_option_variables()));

  ::setenv("DMLBITS_THREADS", "1", 1);
  EXPECT_FALSE(plan->fits(operands, to, read_option_variables()));  // typed: 1 thread against the machine's
  const PreparedRequest one_thread = left_to_variables(true);
  EXPECT_EQ(one_thread.threads(), 1u);
  const RunResult one = run(one_thread, {}, &cache);
  EXPECT_EQ(cached_backends(cache).backends.size(), 2u);
  EXPECT_TRUE(device_text(one.timing.device).ends_with(", 1 thread")) << device_text(one.timing.device);

  ::setenv("DMLBITS_ISA", "scalar", 1);
  EXPECT_FALSE(plan->fits(operands, to, read_option_variables()));
  const PreparedRequest scalar = left_to_variables(true);
  EXPECT_EQ(scalar.isa(), InstructionSet::scalar);
  const RunResult s = run(scalar, {}, &cache);
  EXPECT_EQ(cached_backends(cache).backends.size(), 3u);
  EXPECT_NE(device_text(s.timing.device).find("scalar"), std::string::npos) << device_text(s.timing.device);

  ::unsetenv("DMLBITS_THREADS");
  ::unsetenv("DMLBITS_ISA");
  EXPECT_TRUE(plan->fits(operands, to, read_option_variables()));  // as when it was made
  plan->run(operands, to);
  EXPECT_EQ(out, std::vector<std::uint8_t>(8, 6 & 5));
  (void)run(left_to_variables(false), {}, &cache);
  EXPECT_EQ(cached_backends(cache).backends.size(), 3u);  // the first backend again
  // A refused value is refused by prepare_request each time.
  ::setenv("DMLBITS_THREADS", "0", 1);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(refusal([&] { (void)prepare_request(plannable_and(a, b, Shape{8})); }),
              "usage: DMLBITS_THREADS: '0' is not a thread count from 1 to 256");
    EXPECT_EQ(refusal([&] { (void)read_option_variables(); }),
              "usage: DMLBITS_THREADS: '0' is not a thread count from 1 to 256");
  }
  EXPECT_EQ(read_option_variables(true, false), OptionVariables{});  // a variable not asked for is not read
}

// fits(operands, out) reads the variables its request left on every call: a change makes it
// refuse at once (no run with the choices of another value), a value refused is false (for
// run() to word), and a text that means the same fits. The text found to fit is compared in
// place on the next calls: the full read (option_variable_reads) only for a text not seen.
TEST_F(RequestEnvironment, APlanChecksTheVariablesOnEveryCall) {
  const std::vector<std::uint8_t> a(8, 3), b(8, 5);
  std::vector<std::uint8_t> out(8, 0);
  const MutableTensorView to{DType::uint8, Shape{8}, reinterpret_cast<std::byte*>(out.data())};
  const std::vector<BorrowedTensor> operands{borrowed(a, Shape{8}), borrowed(b, Shape{8})};
  BackendCache cache;
  OperationRequest r = plannable_and(a, b, Shape{8});
  r.threads.reset();
  const PreparedRequest p = prepare_request(std::move(r));
  (void)run(p, {}, &cache);
  const std::optional<OperationPlan> plan = plan_operation(p, cache);
  ASSERT_TRUE(plan);

  std::uint64_t reads = option_variable_reads();
  EXPECT_TRUE(plan->fits(operands, to));  // the first check reads them the full way
  EXPECT_EQ(option_variable_reads(), reads + 1);
  EXPECT_TRUE(plan->fits(operands, to));
  EXPECT_TRUE(plan->fits(operands, to));
  EXPECT_EQ(option_variable_reads(), reads + 1);  // then compares their text in place

  ::setenv("DMLBITS_THREADS", "1", 1);
  EXPECT_FALSE(plan->fits(operands, to));  // 1 thread is not the machine's count
  ::setenv("DMLBITS_THREADS", "0", 1);
  EXPECT_FALSE(plan->fits(operands, to));  // refused: not thrown here, worded by run()
  ::unsetenv("DMLBITS_THREADS");
  ::setenv("DMLBITS_ISA", "scalar", 1);
  EXPECT_FALSE(plan->fits(operands, to));
  ::setenv("DMLBITS_ISA", "bogus", 1);
  EXPECT_FALSE(plan->fits(operands, to));
  ::unsetenv("DMLBITS_ISA");
  EXPECT_TRUE(plan->fits(operands, to));

  ::setenv("DMLBITS_THREADS", "", 1);  // set to nothing: unset's meaning, another text
  reads = option_variable_reads();
  EXPECT_TRUE(plan->fits(operands, to));
  EXPECT_TRUE(plan->fits(operands, to));
  EXPECT_EQ(option_variable_reads(), reads + 1);
  plan->run(operands, to);
  EXPECT_EQ(out, std::vector<std::uint8_t>(8, 3 & 5));
  ::unsetenv("DMLBITS_THREADS");
  EXPECT_TRUE(plan->fits(operands, to));
  EXPECT_FALSE(plan->fits(std::vector{borrowed(a, Shape{8})}, to));  // the operands as the other overload

  // A plan whose request named both options reads neither.
  OperationRequest named = plannable_and(a, b, Shape{8});
  named.threads = 1;
  named.isa = "scalar";
  const PreparedRequest q = prepare_request(std::move(named));
  (void)run(q, {}, &cache);
  const std::optional<OperationPlan> scalar = plan_operation(q, cache);
  ASSERT_TRUE(scalar);
  ::setenv("DMLBITS_THREADS", "0", 1);
  ::setenv("DMLBITS_ISA", "bogus", 1);
  reads = option_variable_reads();
  EXPECT_TRUE(scalar->fits(operands, to));
  EXPECT_EQ(option_variable_reads(), reads);
  EXPECT_FALSE(plan->fits(operands, to));
}

// What prepare_request read is the run's: the variables changed (even to values it would refuse)
// after the request was prepared change nothing of its run, with or without a BackendCache.
TEST_F(RequestEnvironment, APreparedRequestKeepsWhatItRead) {
  const std::vector<std::uint8_t> a(8, 3), b(8, 5);
  OperationRequest r = plannable_and(a, b, Shape{8});
  r.threads.reset();
  r.timing = true;
  const PreparedRequest p = prepare_request(std::move(r));
  EXPECT_EQ(p.isa(), std::nullopt);
  EXPECT_EQ(p.threads(), 0u);
  const std::string before = device_text(run(p).timing.device);

  ::setenv("DMLBITS_THREADS", "1", 1);
  ::setenv("DMLBITS_ISA", "scalar", 1);
  EXPECT_EQ(device_text(run(p).timing.device), before);
  BackendCache cache;
  EXPECT_EQ(device_text(run(p, {}, &cache).timing.device), before);
  ::setenv("DMLBITS_THREADS", "0", 1);  // refused by a new request, not by this one's run
  ::setenv("DMLBITS_ISA", "bogus", 1);
  EXPECT_EQ(device_text(run(p).timing.device), before);
  EXPECT_EQ(device_text(run(p, {}, &cache).timing.device), before);
  EXPECT_EQ(cached_backends(cache).backends.size(), 1u);
}

// The library's one reader of the two variables reads them once per request, and neither run()
// nor a BackendCache's backend nor a plan reads them again.
TEST_F(RequestEnvironment, TheVariablesAreReadOncePerRequest) {
  const std::vector<std::uint8_t> a(8, 3), b(8, 5);
  std::vector<std::uint8_t> out(8, 0);
  const MutableTensorView to{DType::uint8, Shape{8}, reinterpret_cast<std::byte*>(out.data())};
  const std::vector<BorrowedTensor> operands{borrowed(a, Shape{8}), borrowed(b, Shape{8})};
  OperationRequest r = plannable_and(a, b, Shape{8});
  r.threads.reset();
  const std::uint64_t before = option_variable_reads();
  const PreparedRequest p = prepare_request(std::move(r));
  const OptionVariables unset{};  // (the fixture unsets both)
  EXPECT_EQ(option_variable_reads(), before + 1);
  BackendCache cache;
  (void)run(p, {}, &cache);
  (void)run(p);
  const std::optional<OperationPlan> plan = plan_operation(p, cache);
  ASSERT_TRUE(plan);
  EXPECT_TRUE(plan->fits(operands, to, unset));
  plan->run(operands, to);
  EXPECT_EQ(out, std::vector<std::uint8_t>(8, 3 & 5));
  EXPECT_EQ(option_variable_reads(), before + 1);
  // Both options given: the variables are not read at all.
  OperationRequest given = plannable_and(a, b, Shape{8});
  given.threads = 1;
  given.isa = "scalar";
  (void)run(prepare_request(std::move(given)));
  EXPECT_EQ(option_variable_reads(), before + 1);
}

}  // namespace
}  // namespace dmlbits

namespace dmlbits {
namespace {

// What a program linking the library may hand it that no face's parser makes (#44 items 3, 4):
// a dmlbits::Error with the command line's code for the same mistake, never a crash or a
// std:: exception, and no file written.
TEST(RequestFromAProgram, RefusesWhatItIsHandedAsTheCommandLineDoes) {
  const std::vector<std::uint8_t> a(4, 1);
  const auto refused = [&](auto change) -> std::optional<Error> {
    OperationRequest r = not_request(a);
    change(r);
    try {
      (void)run(prepare_request(std::move(r)));
    } catch (const Error& e) {
      return e;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a dmlbits::Error: " << e.what();
      return std::nullopt;
    }
    ADD_FAILURE() << "accepted";
    return std::nullopt;
  };
  const auto expect = [&](auto change, Errc code, const std::string& message) {
    const auto e = refused(change);
    ASSERT_TRUE(e.has_value()) << message;
    EXPECT_EQ(e->code(), code) << e->what();
    EXPECT_NE(std::string(e->what()).find(message), std::string::npos) << e->what() << " | wanted: " << message;
  };
  // A forgotten data pointer (a SIGSEGV in run() before).
  expect([](OperationRequest& r) { std::get<BorrowedTensor>(r.operands[0]).data = nullptr; }, Errc::usage,
         "input A: a borrowed tensor of shape [4] has no data (null)");
  expect(
      [](OperationRequest& r) {
        std::get<BorrowedTensor>(r.operands[0]).strides = {1, 1};
      },
      Errc::usage, "input A: 2 strides for a tensor of 1 dimensions");
  expect([](OperationRequest& r) { std::get<BorrowedTensor>(r.operands[0]).dtype = static_cast<DType>(99); },
         Errc::usage, "data type 99 is not in the data type table");
  // An output file with no name (JSON on standard output before), as the command line's -o ''.
  expect([](OperationRequest& r) { r.output = OutputKind::file; }, Errc::usage,
         "output: an empty file name names no file");
  // An empty operand name, as the command line's `dmlbits and a.npy ''` (status 5 before).
  expect([](OperationRequest& r) { r.operands[0] = std::string(); }, Errc::usage,
         "input A: an empty name names no file");
  // A level DirectML does not define, and an operator outside the table (std::out_of_range before).
  expect([](OperationRequest& r) { r.level = FeatureLevel(4, 2); }, Errc::usage, "unknown level '4_2'");
  expect([](OperationRequest& r) { r.op = static_cast<OpKind>(99); }, Errc::usage,
         "operator 99 is not in the operator table");
  expect(
      [](OperationRequest& r) {
        r.out_dtype = static_cast<DType>(99);
        r.op = OpKind::popcount;
      },
      Errc::usage, "data type 99 is not in the data type table");
  // An output buffer with no memory.
  expect(
      [](OperationRequest& r) {
        r.output = OutputKind::buffer;
        r.buffer = MutableTensorView{DType::uint8, Shape{4}, nullptr};
      },
      Errc::usage, "the output buffer of shape [4] has no data (null)");
  // A zero-element tensor needs no data.
  {
    OperationRequest r = not_request(a);
    auto& t = std::get<BorrowedTensor>(r.operands[0]);
    t.shape = Shape{0};
    t.data = nullptr;
    EXPECT_EQ(run(prepare_request(std::move(r))).result->element_count(), 0u);
  }
}

TEST(RequestFromAProgram, AFileOutputIsNoneOfItsInputs) {
  test::TempDir dir("same-file");
  const std::string path = dir.file("a.npy");
  {
    const std::vector<std::uint8_t> a{1, 2, 3};
    OperationRequest r = not_request(a);
    r.output = OutputKind::file;
    r.path = path;
    (void)run(prepare_request(std::move(r)));
  }
  const std::string before = test::read_file(path);
  ASSERT_FALSE(before.empty());
  for (OutputKind kind : {OutputKind::file, OutputKind::automatic}) {
    OperationRequest r;
    r.op = OpKind::bit_not;
    r.backend = BackendKind::cpu;
    r.operands.emplace_back(path);
    r.output = kind;
    r.path = path;
    try {
      (void)run(prepare_request(std::move(r)));
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage);
      EXPECT_EQ(std::string(e.what()), "input A and the output name the same file '" + path + "'");
    }
    EXPECT_EQ(test::read_file(path), before);  // left as it was
    EXPECT_EQ(dir.names(), std::set<std::string>{"a.npy"});
  }
}

}  // namespace
}  // namespace dmlbits
