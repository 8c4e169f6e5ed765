// The validated graph (lib/src/ops/graph.hpp) on expressions built by hand, so that these tests do
// not lean on the parser: dtypes given to literals by their nodes, a subexpression at two dtypes,
// refusals worded under the node, and the node-by-node run on the reference backend against
// loops written here (std::popcount and C's operators: the oracle).
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cpu_reference.hpp"
#include "dmlbits/error.hpp"
#include "graph.hpp"

namespace dmlbits {
namespace {

// An expression assembled node by node, as the parser would give it (shared nodes once).
class ExprBuilder {
 public:
  explicit ExprBuilder(std::string text) { e_.text = std::move(text); }
  std::int32_t name(const std::string& n) {
    for (std::size_t i = 0; i < e_.nodes.size(); ++i)
      if (e_.nodes[i].kind == expr::NodeKind::name && e_.nodes[i].name == n) return static_cast<std::int32_t>(i);
    bool listed = false;
    for (const auto& x : e_.names) listed = listed || x == n;
    if (!listed) e_.names.push_back(n);
    expr::Node node;
    node.kind = expr::NodeKind::name;
    node.name = n;
    return add(std::move(node));
  }
  std::int32_t lit(const std::string& text) {
    expr::Node node;
    node.kind = expr::NodeKind::literal;
    node.literal = text;
    return add(std::move(node));
  }
  std::int32_t op(OpKind k, std::int32_t a, std::int32_t b = -1, std::optional<DType> out = std::nullopt,
                  expr::Span span = {0, 1}) {
    expr::Node node;
    node.kind = expr::NodeKind::op;
    node.op = k;
    node.args = {a, b};
    node.out_dtype = out;
    node.span = span;
    return add(std::move(node));
  }
  std::shared_ptr<const expr::Expression> done(std::int32_t root) {
    e_.root = root;
    return std::make_shared<const expr::Expression>(e_);
  }

 private:
  std::int32_t add(expr::Node n) {
    e_.nodes.push_back(std::move(n));
    return static_cast<std::int32_t>(e_.nodes.size() - 1);
  }
  expr::Expression e_;
};

// Literals here are whole numbers (one element) or "[x, y, z]" (three).
Shape literal_shape_of(const expr::Expression& e, std::int32_t node) {
  const std::string& t = e.nodes[static_cast<std::size_t>(node)].literal;
  if (t == "bad") throw Error(Errc::invalid_input, "'bad' is not a number");
  if (!t.empty() && t.front() == '[') return Shape{3};
  return Shape{};
}

GraphRequest request_for(std::shared_ptr<const expr::Expression> e, std::vector<OperandInfo> inputs) {
  GraphRequest r;
  const expr::Expression* raw = e.get();
  r.expression = std::move(e);
  r.inputs = std::move(inputs);
  r.literal_shape = [raw](std::int32_t node, DType) { return literal_shape_of(*raw, node); };
  return r;
}

TEST(GraphTest, LiteralsTakeTheirNodesDtype) {
  // a & ~5 with a uint16: the literal and the not are UINT16.
  ExprBuilder b("a & ~5");
  const auto a = b.name("a");
  const auto five = b.lit("5");
  const auto root = b.op(OpKind::bit_and, a, b.op(OpKind::bit_not, five));
  const ValidatedGraph g = validate_graph(request_for(b.done(root), {{DType::uint16, Shape{10}}}));
  ASSERT_EQ(g.nodes().size(), 2u);
  ASSERT_EQ(g.constants().size(), 1u);
  EXPECT_EQ(g.constants()[0].dtype, DType::uint16);
  EXPECT_EQ(g.nodes()[0].op.op().kind, OpKind::bit_not);
  EXPECT_EQ(g.output_dtype(), DType::uint16);
  EXPECT_EQ(g.output_shape(), Shape{10});
  EXPECT_TRUE(g.is_flat_streamable());
}

TEST(GraphTest, PopcountOutputTypesItsUsersLiterals) {
  // popcount(a ^ b) & 3: popcount gives UINT8, so 3 is UINT8; with out_dtype=uint32, UINT32.
  for (DType out : {DType::uint8, DType::uint32}) {
    ExprBuilder b("popcount(a ^ b) & 3");
    const auto na = b.name("a");
    const auto nb = b.name("b");
    const auto x = b.op(OpKind::bit_xor, na, nb);
    const auto pc = b.op(OpKind::popcount, x, -1, out);
    const auto root = b.op(OpKind::bit_and, pc, b.lit("3"));
    const ValidatedGraph g =
        validate_graph(request_for(b.done(root), {{DType::int64, Shape{4}}, {DType::int64, Shape{4}}}));
    ASSERT_EQ(g.constants().size(), 1u);
    EXPECT_EQ(g.constants()[0].dtype, out);
    EXPECT_EQ(g.output_dtype(), out);
    EXPECT_EQ(g.nodes()[0].op.input_dtype(), DType::int64);
  }
}

TEST(GraphTest, ASubexpressionAtTwoDtypesIsTwoNodes) {
  // popcount(a & ~5) ^ popcount(c & ~5), a UINT16 and c UINT32: one ~5 in the expression, two in
  // the graph (UINT16 and UINT32), each with its own constant.
  ExprBuilder b("popcount(a & ~5) ^ popcount(c & ~5)");
  const auto not5 = b.op(OpKind::bit_not, b.lit("5"));
  const auto left = b.op(OpKind::popcount, b.op(OpKind::bit_and, b.name("a"), not5));
  const auto right = b.op(OpKind::popcount, b.op(OpKind::bit_and, b.name("c"), not5));
  const auto root = b.op(OpKind::bit_xor, left, right);
  const ValidatedGraph g =
      validate_graph(request_for(b.done(root), {{DType::uint16, Shape{8}}, {DType::uint32, Shape{8}}}));
  EXPECT_EQ(g.nodes().size(), 7u);
  ASSERT_EQ(g.constants().size(), 2u);
  EXPECT_EQ(g.constants()[0].dtype, DType::uint16);
  EXPECT_EQ(g.constants()[1].dtype, DType::uint32);
  EXPECT_EQ(g.output_dtype(), DType::uint8);
}

TEST(GraphTest, SharedNodesOfOneDtypeAreBuiltOnce) {
  // (a ^ b) | popcount(a ^ b, out_dtype=uint32) with uint32 inputs: one xor node.
  ExprBuilder b("(a ^ b) | popcount(a ^ b, out_dtype=uint32)");
  const auto na = b.name("a");
  const auto nb = b.name("b");
  const auto x = b.op(OpKind::bit_xor, na, nb);
  const auto root = b.op(OpKind::bit_or, x, b.op(OpKind::popcount, x, -1, DType::uint32));
  const ValidatedGraph g =
      validate_graph(request_for(b.done(root), {{DType::uint32, Shape{8}}, {DType::uint32, Shape{8}}}));
  EXPECT_EQ(g.nodes().size(), 3u);
}

TEST(GraphTest, RefusesANodeUnderItsText) {
  // xor of INT32 needs 4_1: refused at 3_0, the message the operator's own under the node.
  ExprBuilder b("popcount(a ^ b)");
  const auto na = b.name("a");
  const auto nb = b.name("b");
  const auto x = b.op(OpKind::bit_xor, na, nb, std::nullopt, {9, 5});
  const auto root = b.op(OpKind::popcount, x);
  GraphRequest r = request_for(b.done(root), {{DType::int32, Shape{2}}, {DType::int32, Shape{2}}});
  r.level = FeatureLevel(3, 0);
  try {
    validate_graph(r);
    FAIL() << "validated";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_input);
    const std::string m = e.what();
    EXPECT_NE(m.find("xor: data type INT32 needs DML_FEATURE_LEVEL_4_1 or later (requested 3_0)"), std::string::npos)
        << m;
    EXPECT_NE(m.find("popcount(a ^ b)"), std::string::npos) << m;
    EXPECT_NE(m.find("column 10"), std::string::npos) << m;
  }
}

TEST(GraphTest, RefusesOperandsOfTwoDtypes) {
  ExprBuilder b("a & c");
  const auto root = b.op(OpKind::bit_and, b.name("a"), b.name("c"));
  EXPECT_THROW(validate_graph(request_for(b.done(root), {{DType::uint8, Shape{2}}, {DType::uint16, Shape{2}}})), Error);
}

TEST(GraphTest, ALiteralNothingTypesNeedsADtype) {
  ExprBuilder b("popcount(~5)");
  const auto root = b.op(OpKind::popcount, b.op(OpKind::bit_not, b.lit("5")));
  auto e = b.done(root);
  try {
    validate_graph(request_for(e, {}));
    FAIL() << "validated";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), Errc::invalid_input);
    EXPECT_NE(std::string(err.what()).find("no dtype was given"), std::string::npos) << err.what();
  }
  GraphRequest r = request_for(e, {});
  r.dtype = DType::uint32;
  const ValidatedGraph g = validate_graph(r);
  EXPECT_EQ(g.constants()[0].dtype, DType::uint32);
  EXPECT_EQ(g.output_dtype(), DType::uint8);
}

TEST(GraphTest, ALiteralItsDtypeCannotHoldIsRefusedUnderIt) {
  ExprBuilder b("a & bad");
  const auto root = b.op(OpKind::bit_and, b.name("a"), b.lit("bad"));
  try {
    validate_graph(request_for(b.done(root), {{DType::uint8, Shape{2}}}));
    FAIL() << "validated";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), Errc::invalid_input);
    EXPECT_NE(std::string(err.what()).find("'bad' is not a number"), std::string::npos) << err.what();
  }
}

TEST(GraphTest, AnOperandAloneComputesNothing) {
  ExprBuilder b("a");
  const auto root = b.name("a");
  try {
    validate_graph(request_for(b.done(root), {{DType::uint8, Shape{2}}}));
    FAIL() << "validated";
  } catch (const Error& err) {
    EXPECT_EQ(err.code(), Errc::usage);
  }
}

TEST(GraphTest, BroadcastingBetweenNodes) {
  // popcount(a ^ b) with a {4,1} and b {3}: the xor is {4,3}; not flat (a broadcasts an axis).
  ExprBuilder b("popcount(a ^ b)");
  const auto na = b.name("a");
  const auto nb = b.name("b");
  const auto root = b.op(OpKind::popcount, b.op(OpKind::bit_xor, na, nb));
  const ValidatedGraph g =
      validate_graph(request_for(b.done(root), {{DType::uint32, Shape{4, 1}}, {DType::uint32, Shape{3}}}));
  EXPECT_EQ(g.output_shape(), (Shape{4, 3}));
  EXPECT_FALSE(g.is_flat_streamable());

  std::vector<std::uint32_t> a{1, 0xff, 0xffffffffu, 7}, bb{0, 0xf0, 3};
  std::vector<std::uint8_t> out(12, 0xcc);
  CpuReferenceBackend ref;
  const std::vector<std::span<const std::byte>> inputs{std::as_bytes(std::span(a)), std::as_bytes(std::span(bb))};
  run_graph_nodes(g, ref, inputs, {}, std::as_writable_bytes(std::span(out)));
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(out[i * 3 + j], std::popcount(a[i] ^ bb[j])) << i << "," << j;
}

TEST(GraphTest, NodeByNodeOnTheReferenceAgreesWithCsOperators) {
  // (a >> 3) & 0xff and a & ~b and popcount(a ^ b), uint32, 1000 random elements.
  std::mt19937 gen(7);
  std::vector<std::uint32_t> a(1000), c(1000);
  for (auto& x : a) x = static_cast<std::uint32_t>(gen());
  for (auto& x : c) x = static_cast<std::uint32_t>(gen());
  const std::vector<std::span<const std::byte>> inputs{std::as_bytes(std::span(a)), std::as_bytes(std::span(c))};
  CpuReferenceBackend ref;
  {
    ExprBuilder b("(a >> 3) & 0xff");
    const auto root = b.op(OpKind::bit_and, b.op(OpKind::shr, b.name("a"), b.lit("3")), b.lit("0xff"));
    const ValidatedGraph g = validate_graph(request_for(b.done(root), {{DType::uint32, Shape{1000}}}));
    const std::uint32_t three = 3, mask = 0xff;
    const std::vector<std::span<const std::byte>> constants{std::as_bytes(std::span(&three, 1)),
                                                            std::as_bytes(std::span(&mask, 1))};
    std::vector<std::uint32_t> out(1000);
    run_graph_nodes(g, ref, std::span(inputs).first(1), constants, std::as_writable_bytes(std::span(out)));
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(out[i], (a[i] >> 3) & 0xff) << i;
  }
  {
    ExprBuilder b("a & ~b");
    const auto na = b.name("a");  // names in order: a C++ call's arguments have none
    const auto root = b.op(OpKind::bit_and, na, b.op(OpKind::bit_not, b.name("b")));
    const ValidatedGraph g =
        validate_graph(request_for(b.done(root), {{DType::uint32, Shape{1000}}, {DType::uint32, Shape{1000}}}));
    std::vector<std::uint32_t> out(1000);
    run_graph_nodes(g, ref, inputs, {}, std::as_writable_bytes(std::span(out)));
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(out[i], a[i] & ~c[i]) << i;
  }
  {
    ExprBuilder b("popcount(a ^ b)");
    const auto na = b.name("a");
    const auto nb = b.name("b");
    const auto root = b.op(OpKind::popcount, b.op(OpKind::bit_xor, na, nb));
    const ValidatedGraph g =
        validate_graph(request_for(b.done(root), {{DType::uint32, Shape{1000}}, {DType::uint32, Shape{1000}}}));
    std::vector<std::uint8_t> out(1000);
    run_graph_nodes(g, ref, inputs, {}, std::as_writable_bytes(std::span(out)));
    for (std::size_t i = 0; i < a.size(); ++i) ASSERT_EQ(out[i], std::popcount(a[i] ^ c[i])) << i;
  }
}

}  // namespace
}  // namespace dmlbits

namespace dmlbits {
namespace {

TEST(GraphTest, FlatChunksComputeTheirRangeOfTheOutput) {
  // popcount(a ^ k) & ~m, k one element and m a literal: chunks of 7 over 50 elements agree with
  // C's operators element by element.
  ExprBuilder b("popcount(a ^ k) & ~m");
  const auto na = b.name("a");
  const auto nk = b.name("k");
  const auto root =
      b.op(OpKind::bit_and, b.op(OpKind::popcount, b.op(OpKind::bit_xor, na, nk)), b.op(OpKind::bit_not, b.lit("1")));
  const ValidatedGraph g =
      validate_graph(request_for(b.done(root), {{DType::uint16, Shape{5, 10}}, {DType::uint16, Shape{}}}));
  ASSERT_TRUE(g.is_flat_streamable());
  std::vector<std::uint16_t> a(50);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint16_t>(i * 2654435761u);
  const std::uint16_t k = 0x5a5a;
  const std::uint8_t one = 1;
  std::vector<std::uint8_t> out(50, 0xcc);
  CpuReferenceBackend ref;
  for (std::uint64_t first = 0; first < a.size(); first += 7) {
    const std::uint64_t count = std::min<std::uint64_t>(7, a.size() - first);
    const ValidatedGraph chunk = g.flat_chunk(count);
    EXPECT_EQ(chunk.output_shape(), Shape{count});
    const std::vector<std::span<const std::byte>> inputs{std::as_bytes(std::span(a).subspan(first, count)),
                                                         std::as_bytes(std::span(&k, 1))};
    const std::vector<std::span<const std::byte>> constants{std::as_bytes(std::span(&one, 1))};
    run_graph_nodes(chunk, ref, inputs, constants, std::as_writable_bytes(std::span(out).subspan(first, count)));
  }
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(out[i], static_cast<std::uint8_t>(std::popcount(static_cast<std::uint16_t>(a[i] ^ k)) & ~1)) << i;
}

}  // namespace
}  // namespace dmlbits

#include "cpu_backend.hpp"

namespace dmlbits {
namespace {

// CpuBackend::run_graph (fused where flat, node by node otherwise) against run_graph_nodes on the
// reference, over sizes around the tiles and the per-thread split, with one-element inputs and
// literals of either kind (a number, a list of the output's length).
TEST(GraphTest, CpuBackendRunsGraphsAsTheReferenceNodeByNode) {
  std::mt19937_64 gen(11);
  for (std::uint64_t n : {1ull, 63ull, 64ull, 65ull, 2047ull, 2048ull, 2049ull, 100003ull}) {
    for (unsigned threads : {1u, 2u}) {
      ExprBuilder b("popcount((a >> k) ^ ~c, out_dtype=uint32) | (a & [list])");
      const auto na = b.name("a");
      const auto nk = b.name("k");
      const auto nc = b.name("c");
      const auto shifted = b.op(OpKind::shr, na, nk);
      const auto x = b.op(OpKind::bit_xor, shifted, b.op(OpKind::bit_not, nc));
      const auto pc = b.op(OpKind::popcount, x, -1, DType::uint32);
      const auto root = b.op(OpKind::bit_or, pc, b.op(OpKind::bit_and, na, b.lit("7")));
      auto e = b.done(root);
      GraphRequest r = request_for(e, {{DType::uint32, Shape{n}}, {DType::uint32, Shape{}}, {DType::uint32, Shape{n}}});
      const ValidatedGraph g = validate_graph(r);
      ASSERT_TRUE(CpuBackend::fuses(g));
      std::vector<std::uint32_t> a(n), c(n);
      for (auto& v : a) v = static_cast<std::uint32_t>(gen());
      for (auto& v : c) v = static_cast<std::uint32_t>(gen());
      const std::uint32_t k = static_cast<std::uint32_t>(n % 37);  // past the width too: DirectML's rule, count & 31
      const std::uint32_t seven = 7;
      const std::vector<std::span<const std::byte>> inputs{std::as_bytes(std::span(a)), std::as_bytes(std::span(&k, 1)),
                                                           std::as_bytes(std::span(c))};
      const std::vector<std::span<const std::byte>> constants{std::as_bytes(std::span(&seven, 1))};
      std::vector<std::uint32_t> want(n), got(n, 0xdeadbeef);
      CpuReferenceBackend ref;
      run_graph_nodes(g, ref, inputs, constants, std::as_writable_bytes(std::span(want)));
      CpuBackend cpu(std::nullopt, {.threads = threads, .parallel_min_bytes = 4096});
      cpu.run_graph(g, {inputs, constants, std::as_writable_bytes(std::span(got))});
      ASSERT_EQ(got, want) << "n=" << n << " threads=" << threads;
      for (std::size_t i = 0; i < n; i += 997)
        ASSERT_EQ(want[i], static_cast<std::uint32_t>(std::popcount((a[i] >> (k & 31)) ^ ~c[i])) | (a[i] & 7u)) << i;
    }
  }
}

TEST(GraphTest, CpuBackendRunsAnAxisBroadcastNodeByNode) {
  ExprBuilder b("popcount(a ^ b)");
  const auto na = b.name("a");
  const auto nb = b.name("b");
  const auto root = b.op(OpKind::popcount, b.op(OpKind::bit_xor, na, nb));
  const ValidatedGraph g =
      validate_graph(request_for(b.done(root), {{DType::uint64, Shape{3, 1}}, {DType::uint64, Shape{4}}}));
  EXPECT_FALSE(CpuBackend::fuses(g));
  std::vector<std::uint64_t> a{1, ~0ull, 0x8000000000000000ull}, c{0, 1, 3, ~0ull};
  std::vector<std::uint8_t> out(12, 0xcc);
  CpuBackend cpu;
  cpu.run_graph(
      g, {{std::as_bytes(std::span(a)), std::as_bytes(std::span(c))}, {}, std::as_writable_bytes(std::span(out))});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(out[i * 4 + j], std::popcount(a[i] ^ c[j]));
}

}  // namespace
}  // namespace dmlbits
