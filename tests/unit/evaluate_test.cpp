// Expressions through the library's one entry point, run(): names bound to borrowed tensors and
// literals, the refusals of binding, and an in-memory run cut into chunks for a face's
// interruption hook (RunHooks::between_chunks). Expected values: std::popcount and C's operators.
#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "dmlbits/error.hpp"
#include "dmlbits/request.hpp"

namespace dmlbits {
namespace {

BorrowedTensor borrow(const std::vector<std::uint32_t>& v) {
  BorrowedTensor t;
  t.dtype = DType::uint32;
  t.shape = Shape{v.size()};
  t.data = reinterpret_cast<const std::byte*>(v.data());
  return t;
}

OperationRequest expression_request(std::string text, std::vector<std::string> names, std::vector<Operand> operands) {
  OperationRequest r;
  r.expression = std::move(text);
  r.names = std::move(names);
  r.operands = std::move(operands);
  r.output = OutputKind::memory;
  r.timing = false;
  return r;
}

TEST(EvaluateTest, BindsNamesToBorrowedTensorsAndLiterals) {
  const std::vector<std::uint32_t> a{1, 2, 0xffffffff, 0x80000000}, b{3, 3, 1, 0x80000001};
  // k bound to a literal is that literal: (a >> k) & b.
  const RunResult r = run(
      prepare_request(expression_request("(a >> k) & b", {"b", "k", "a"}, {borrow(b), std::string("1"), borrow(a)})));
  ASSERT_TRUE(r.result);
  ASSERT_EQ(r.result->shape(), Shape{4});
  const auto* got = reinterpret_cast<const std::uint32_t*>(r.result->data());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(got[i], (a[i] >> 1) & b[i]) << i;
  EXPECT_EQ(r.op.summary().expression, "(a >> k) & b");
  EXPECT_EQ(r.op.summary().output_dtype, DType::uint32);
  EXPECT_NE(r.op.explain_json().find("DML_OPERATOR_ELEMENT_WISE_BIT_SHIFT_RIGHT"), std::string::npos);
}

TEST(EvaluateTest, RefusesBindingsAsUsageErrors) {
  const std::vector<std::uint32_t> a{1};
  const auto code = [&](std::string text, std::vector<std::string> names, std::vector<Operand> operands) {
    try {
      run(prepare_request(expression_request(std::move(text), std::move(names), std::move(operands))));
    } catch (const Error& e) {
      return e.code();
    }
    return Errc::internal;  // (no refusal: reported as the wrong code)
  };
  EXPECT_EQ(code("a ^ b", {"a"}, {borrow(a)}), Errc::usage);                    // b unbound
  EXPECT_EQ(code("~a", {"a", "a"}, {borrow(a), borrow(a)}), Errc::usage);       // a bound twice
  EXPECT_EQ(code("~a", {"a", "c"}, {borrow(a), borrow(a)}), Errc::usage);       // c unused
  EXPECT_EQ(code("~a", {"a"}, {borrow(a), borrow(a)}), Errc::usage);            // a name each
  EXPECT_EQ(code("~(a", {"a"}, {borrow(a)}), Errc::usage);                      // syntax
  EXPECT_EQ(code("popcount(a) & a", {"a"}, {borrow(a)}), Errc::invalid_input);  // UINT8 & UINT32
  OperationRequest in_place = expression_request("~a", {"a"}, {borrow(a)});
  in_place.in_place = true;
  EXPECT_THROW(prepare_request(in_place), Error);
}

TEST(EvaluateTest, AnInterruptibleRunGoesInChunksAndGivesTheSameResult) {
  // 2 x 48 MiB in, 12 MiB out: past kInMemoryChunkBytes, so the hook is called between chunks.
  const std::size_t n = std::size_t{12} << 20;
  std::vector<std::uint32_t> a(n), b(n);
  std::mt19937 gen(46);
  for (auto& v : a) v = static_cast<std::uint32_t>(gen());
  for (auto& v : b) v = static_cast<std::uint32_t>(gen());
  for (const char* backend : {"cpu", "cpu-reference"}) {
    OperationRequest r = expression_request("popcount(a ^ b)", {"a", "b"}, {borrow(a), borrow(b)});
    r.backend = parse_backend(backend);
    int calls = 0;
    RunHooks hooks;
    hooks.between_chunks = [&] { ++calls; };
    const RunResult result = run(prepare_request(r), hooks);
    EXPECT_GE(calls, 1) << backend;
    const auto* got = reinterpret_cast<const std::uint8_t*>(result.result->data());
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(got[i], std::popcount(a[i] ^ b[i])) << backend << " " << i;
    // A hook that throws stops the run between chunks.
    hooks.between_chunks = [] { throw Error(Errc::interrupted, "interrupted"); };
    EXPECT_THROW(run(prepare_request(r), hooks), Error);
  }
}

}  // namespace
}  // namespace dmlbits
