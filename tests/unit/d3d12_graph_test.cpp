// D3d12Backend::run_graph, differential against the executable specification: run_graph_nodes
// on the reference backend, byte for byte. Random flat graphs of 1 to 5 nodes over every element
// width and dtype, with shared inputs, one-element inputs (0-d and [1]) and literals, popcount
// to UINT8 and UINT32 feeding further nodes, shifts in every ShiftOverflow mode with counts
// around the element width, on sizes 0, 1, odd sizes and sizes around an output unit, a thread
// group and a chunk (the buffer limit lowered to 4 KiB, transfer pieces to 256 bytes). Graphs
// the backend cannot fuse (one node, broadcasts along one dimension, nine input buffers) run node
// by node, with the same bytes.
//
// Needs an adapter (lavapipe is one). Without one the tests are skipped with the reason, unless
// DMLBITS_REQUIRE_D3D12=1 (CI), where a missing adapter fails.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend.hpp"
#include "cpu_reference.hpp"
#include "d3d12_backend.hpp"
#include "dmlbits/error.hpp"
#include "graph.hpp"

namespace dmlbits {
namespace {

using Bytes = std::vector<std::byte>;

bool d3d12_required() {
  const char* v = std::getenv("DMLBITS_REQUIRE_D3D12");
  return v && std::string(v) == "1";
}

struct Gpus {
  std::unique_ptr<D3d12Backend> plain, chunked;
  std::string reason;
};
// The default backend, and one with 4 KiB buffers and 256-byte transfer pieces (many chunks
// and pieces with small tensors).
Gpus& gpus() {
  static Gpus g = [] {
    Gpus out;
    try {
      out.plain = std::make_unique<D3d12Backend>();
      D3d12BackendOptions o;
      o.max_buffer_bytes = 4096;
      o.transfer_piece_bytes = 256;
      out.chunked = std::make_unique<D3d12Backend>(o);
    } catch (const Error& e) {
      out.reason = e.what();
    }
    return out;
  }();
  return g;
}

#define REQUIRE_GPU()                                                                                    \
  do {                                                                                                   \
    if (!gpus().plain) {                                                                                 \
      if (d3d12_required()) FAIL() << "DMLBITS_REQUIRE_D3D12=1 but no D3D12 adapter: " << gpus().reason; \
      GTEST_SKIP() << "no D3D12 adapter: " << gpus().reason;                                             \
    }                                                                                                    \
  } while (0)

// A graph as the parser would give it, built by hand: inputs with their shapes and data,
// literals with their values.
struct TestGraph {
  std::shared_ptr<expr::Expression> e = std::make_shared<expr::Expression>();
  std::vector<OperandInfo> inputs;                 // e->names' order
  std::map<std::int32_t, std::uint64_t> literals;  // expression node -> value (its low bytes)
  std::map<std::int32_t, Shape> literal_shapes;    // where not one element

  std::int32_t add(expr::Node n) {
    n.span = {0, static_cast<std::uint32_t>(e->text.size())};
    e->nodes.push_back(std::move(n));
    return static_cast<std::int32_t>(e->nodes.size() - 1);
  }
  std::int32_t name(const std::string& n, OperandInfo info) {
    for (std::size_t i = 0; i < e->nodes.size(); ++i)
      if (e->nodes[i].kind == expr::NodeKind::name && e->nodes[i].name == n) return static_cast<std::int32_t>(i);
    e->names.push_back(n);
    inputs.push_back(std::move(info));
    expr::Node node;
    node.kind = expr::NodeKind::name;
    node.name = n;
    return add(std::move(node));
  }
  std::int32_t lit(std::uint64_t v) {
    expr::Node node;
    node.kind = expr::NodeKind::literal;
    node.literal = fmt::format("{:#x}", v);
    const std::int32_t i = add(std::move(node));
    literals[i] = v;
    return i;
  }
  std::int32_t op(OpKind k, std::int32_t a, std::int32_t b = -1, std::optional<DType> out = std::nullopt) {
    expr::Node node;
    node.kind = expr::NodeKind::op;
    node.op = k;
    node.args = {a, b};
    node.out_dtype = out;
    return add(std::move(node));
  }
  ValidatedGraph validate(std::int32_t root, ShiftOverflow mode) {
    e->root = root;
    e->text = "(test graph)";
    GraphRequest r;
    r.expression = e;
    r.inputs = inputs;
    r.shift_overflow = mode;
    r.literal_shape = [this](std::int32_t node, DType) {
      auto it = literal_shapes.find(node);
      return it == literal_shapes.end() ? Shape{} : it->second;
    };
    return validate_graph(r);
  }
};

// Random elements: half of them random bits, half small numbers (shift counts around and past
// every element width, 0 to 99).
Bytes random_bytes(std::mt19937_64& rng, std::size_t elements, std::size_t width) {
  Bytes b(elements * width);
  for (std::size_t i = 0; i < elements; ++i) {
    const std::uint64_t v = rng() % 2 ? rng() : rng() % 100;
    std::memcpy(&b[i * width], &v, width);
  }
  return b;
}

// The graph's inputs and constants as run_graph takes them.
struct GraphData {
  std::vector<Bytes> inputs, constants;
  GraphBuffers buffers(Bytes& out) const {
    GraphBuffers g;
    for (const auto& b : inputs) g.inputs.push_back({b.data(), b.size()});
    for (const auto& b : constants) g.constants.push_back({b.data(), b.size()});
    g.output = {out.data(), out.size()};
    return g;
  }
};

GraphData make_data(const TestGraph& t, const ValidatedGraph& g, std::mt19937_64& rng) {
  GraphData d;
  for (const OperandInfo& in : g.inputs())
    d.inputs.push_back(random_bytes(rng, in.shape.element_count(), dtype_info(in.dtype).size));
  for (const GraphConstant& c : g.constants()) {
    const std::size_t size = dtype_info(c.dtype).size;
    Bytes b(c.shape.element_count() * size);
    const std::uint64_t v = t.literals.at(c.expr_node);
    for (std::size_t i = 0; i < c.shape.element_count(); ++i) std::memcpy(&b[i * size], &v, size);
    d.constants.push_back(std::move(b));
  }
  return d;
}

std::string hex(const std::byte* p, std::size_t n) {
  std::string s = "0x";
  for (std::size_t i = n; i-- > 0;) s += fmt::format("{:02x}", static_cast<unsigned>(p[i]));
  return s;
}

// A description of the graph for failure messages: its nodes with their operands and dtypes.
std::string describe(const ValidatedGraph& g) {
  std::string s;
  const auto value = [&](const GraphValue& v) {
    const char* kinds[] = {"in", "const", "node"};
    return fmt::format("{}{}", kinds[static_cast<int>(v.kind)], v.index);
  };
  for (std::size_t j = 0; j < g.nodes().size(); ++j) {
    const GraphNode& n = g.nodes()[j];
    s += fmt::format(" node{} = {}<{}->{}", j, n.op.op().verb, dtype_info(n.op.input_dtype()).numpy_name,
                     dtype_info(n.op.output_dtype()).numpy_name);
    if (n.op.op().shift) s += fmt::format(",{}", shift_overflow_name(n.op.desc().shift_overflow));
    s += ">(" + value(n.args[0]);
    if (n.op.op().arity == 2) s += ", " + value(n.args[1]);
    s += ");";
  }
  for (std::size_t i = 0; i < g.inputs().size(); ++i)
    s += fmt::format(" in{}: {} {} elements;", i, dtype_info(g.inputs()[i].dtype).numpy_name,
                     g.inputs()[i].shape.element_count());
  return s;
}

// Runs `g` on `backend` and node by node on the reference, and compares the bytes.
void expect_same(D3d12Backend& backend, const ValidatedGraph& g, const GraphData& d, const std::string& what) {
  const std::size_t size = dtype_info(g.output_dtype()).size;
  const std::size_t n = g.output_shape().element_count();
  Bytes got(n * size, std::byte{0xAB}), want(n * size, std::byte{0xCD});
  backend.run_graph(g, d.buffers(got));
  CpuReferenceBackend ref;
  const GraphBuffers rb = d.buffers(want);
  run_graph_nodes(g, ref, rb.inputs, rb.constants, rb.output);
  if (got == want) return;
  std::size_t i = 0;
  while (i < n && std::memcmp(&got[i * size], &want[i * size], size) == 0) ++i;
  std::string ins;
  for (std::size_t k = 0; k < d.inputs.size(); ++k) {
    const std::size_t w = dtype_info(g.inputs()[k].dtype).size;
    ins += d.inputs[k].size() == n * w ? " " + hex(&d.inputs[k][i * w], w) : " (one element)";
  }
  ADD_FAILURE() << what << ": element " << i << " of " << n << ", inputs" << ins << ": d3d12 gave "
                << hex(&got[i * size], size) << ", the reference " << hex(&want[i * size], size) << ";" << describe(g);
}

constexpr DType kDtypes[] = {DType::uint8,  DType::int8,  DType::uint16, DType::int16,
                             DType::uint32, DType::int32, DType::uint64, DType::int64};

// Random typed expressions: a subexpression of dtype `d` with `budget` operator nodes.
class RandomGraph {
 public:
  RandomGraph(std::mt19937_64& rng, std::size_t count) : rng_(rng), count_(count) {}

  std::int32_t expression(DType d, unsigned budget) {
    if (budget == 0) return leaf(d);
    // popcount gives UINT8 or UINT32 counts, from any width.
    const bool counts = d == DType::uint8 || d == DType::uint32;
    unsigned pick = static_cast<unsigned>(rng_() % (counts ? 8 : 6));
    if ((pick == 3 || pick == 4) && !shiftable(d)) pick -= 3;  // shifts take unsigned types only
    if (pick >= 6) return t.op(OpKind::popcount, expression(kDtypes[rng_() % 8], budget - 1), -1, d);
    if (pick == 5) return t.op(OpKind::bit_not, expression(d, budget - 1));
    const OpKind binary[] = {OpKind::bit_and, OpKind::bit_or, OpKind::bit_xor, OpKind::shl, OpKind::shr};
    const unsigned left = static_cast<unsigned>(rng_() % budget);
    const std::int32_t a = expression(d, left);
    const std::int32_t b = expression(d, budget - 1 - left);
    return t.op(binary[pick], a, b);
  }

  TestGraph t;

 private:
  static bool shiftable(DType d) {
    return d == DType::uint8 || d == DType::uint16 || d == DType::uint32 || d == DType::uint64;
  }

  // An input (a new one or one already made of that dtype and kind), a one-element input
  // (0-d or [1]), or a literal.
  std::int32_t leaf(DType d) {
    const unsigned kind = static_cast<unsigned>(rng_() % 6);
    if (kind == 0) return t.lit(rng_() % 2 ? rng_() : rng_() % 70);
    const bool scalar = kind == 1;
    const std::string key = fmt::format("{}{}", dtype_info(d).numpy_name, scalar ? "s" : "");
    auto& names = names_[key];
    if (names.empty() || rng_() % 3 == 0) names.push_back(fmt::format("{}_{}", key, names.size()));
    const std::string& name = names[rng_() % names.size()];
    const Shape shape = scalar ? (rng_() % 2 ? Shape{} : Shape{1}) : Shape{count_};
    return t.name(name, {d, shape});
  }

  std::mt19937_64& rng_;
  std::size_t count_;
  std::map<std::string, std::vector<std::string>> names_;
};

constexpr std::size_t kSizes[] = {0,    1,    2,    3,    5,    7,    15,    16,    17,   31,   33,
                                  63,   64,   65,   255,  256,  257,  1023,  1024,  1025, 2047, 2049,
                                  4095, 4096, 4097, 4159, 8191, 8193, 16383, 16385, 33333};

TEST(D3d12GraphTest, RandomFlatGraphsMatchTheNodeByNodeReference) {
  REQUIRE_GPU();
  std::mt19937_64 rng(46);
  unsigned fused = 0, runs = 0;
  for (int trial = 0; trial < 240; ++trial) {
    const std::size_t count = kSizes[rng() % std::size(kSizes)];
    const ShiftOverflow mode = shift_overflow_modes()[rng() % shift_overflow_modes().size()];
    const unsigned nodes = 1 + static_cast<unsigned>(rng() % 5);
    RandomGraph r(rng, count);
    const DType out = kDtypes[rng() % 8];
    const std::int32_t root = r.expression(out, nodes);
    std::optional<ValidatedGraph> g;
    try {
      g.emplace(r.t.validate(root, mode));
    } catch (const Error&) {
      continue;  // e.g. an operator of literals alone, which nothing gives a dtype
    }
    const GraphData d = make_data(r.t, *g, rng);
    const std::string what = fmt::format("trial {} ({} elements, {} nodes)", trial, count, g->nodes().size());
    D3d12Backend& backend = trial % 3 == 2 ? *gpus().chunked : *gpus().plain;
    if (g->nodes().size() >= 2) {
      EXPECT_EQ(backend.fusion_refusal(*g), std::nullopt) << what << describe(*g);
      ++fused;
    }
    expect_same(backend, *g, d, what);
    ++runs;
    if (::testing::Test::HasFailure()) break;  // one graph's failure is enough to read
  }
  EXPECT_GE(runs, 200u);
  EXPECT_GE(fused, 120u);
}

// popcount(a ^ b) & 3 over every input width, both count widths, every size of kSizes, both
// backends: a fixed graph at every boundary.
TEST(D3d12GraphTest, PopcountOfXorMaskedAtEverySize) {
  REQUIRE_GPU();
  std::mt19937_64 rng(3);
  for (DType in : {DType::uint8, DType::int16, DType::uint32, DType::int64})
    for (DType out : {DType::uint8, DType::uint32})
      for (std::size_t count : kSizes) {
        TestGraph t;
        const auto a = t.name("a", {in, Shape{count}});
        const auto b = t.name("b", {in, Shape{count}});
        const auto root = t.op(OpKind::bit_and, t.op(OpKind::popcount, t.op(OpKind::bit_xor, a, b), -1, out), t.lit(3));
        const ValidatedGraph g = t.validate(root, kDefaultShiftOverflow);
        ASSERT_EQ(gpus().plain->fusion_refusal(g), std::nullopt);
        const GraphData d = make_data(t, g, rng);
        for (D3d12Backend* backend : {gpus().plain.get(), gpus().chunked.get()})
          expect_same(*backend, g, d,
                      fmt::format("popcount({} ^ {}) -> {}, {} elements", dtype_info(in).numpy_name,
                                  dtype_info(in).numpy_name, dtype_info(out).numpy_name, count));
      }
}

// Shifts of every width in every mode, by counts around the width, from a buffer and from a
// one-element input, feeding a further node.
TEST(D3d12GraphTest, ShiftsInEveryModeFeedingFurtherNodes) {
  REQUIRE_GPU();
  std::mt19937_64 rng(5);
  for (DType d : {DType::uint8, DType::uint16, DType::uint32, DType::uint64})
    for (ShiftOverflow mode : shift_overflow_modes())
      for (bool scalar_count : {false, true}) {
        const std::size_t count = 1000;
        TestGraph t;
        const auto a = t.name("a", {d, Shape{count}});
        const auto n = t.name("n", {d, scalar_count ? Shape{} : Shape{count}});
        // (a << n) >> 1 ^ ~(a >> n)
        const auto root = t.op(OpKind::bit_xor, t.op(OpKind::shr, t.op(OpKind::shl, a, n), t.lit(1)),
                               t.op(OpKind::bit_not, t.op(OpKind::shr, a, n)));
        const ValidatedGraph g = t.validate(root, mode);
        ASSERT_EQ(gpus().plain->fusion_refusal(g), std::nullopt);
        for (std::uint64_t shift : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 63u, 64u, 65u, 200u}) {
          GraphData data = make_data(t, g, rng);
          const std::size_t w = dtype_info(d).size;
          if (scalar_count) std::memcpy(data.inputs[1].data(), &shift, w);
          else
            for (std::size_t i = 0; i < count; ++i) {
              const std::uint64_t c = (i % 3 == 0) ? shift : (shift + i) % 130;
              std::memcpy(&data.inputs[1][i * w], &c, w);
            }
          expect_same(*gpus().plain, g, data,
                      fmt::format("{} {} count {}{}", dtype_info(d).numpy_name, shift_overflow_name(mode), shift,
                                  scalar_count ? " (one element)" : ""));
        }
      }
}

// What the kernel cannot take runs node by node, with the same bytes.
TEST(D3d12GraphTest, GraphsItCannotFuseRunNodeByNode) {
  REQUIRE_GPU();
  D3d12Backend& backend = *gpus().plain;
  std::mt19937_64 rng(9);
  {  // one node: the operator's own kernel
    TestGraph t;
    const auto root =
        t.op(OpKind::shl, t.name("a", {DType::uint16, Shape{77}}), t.name("b", {DType::uint16, Shape{77}}));
    const ValidatedGraph g = t.validate(root, ShiftOverflow::wrap);
    EXPECT_NE(backend.fusion_refusal(g), std::nullopt);
    expect_same(backend, g, make_data(t, g, rng), "one node");
  }
  {  // broadcast along one dimension: popcount(a ^ b), a [4, 1], b [1, 3]
    TestGraph t;
    const auto root = t.op(OpKind::popcount, t.op(OpKind::bit_xor, t.name("a", {DType::uint32, Shape{4, 1}}),
                                                  t.name("b", {DType::uint32, Shape{1, 3}})));
    const ValidatedGraph g = t.validate(root, kDefaultShiftOverflow);
    ASSERT_TRUE(backend.fusion_refusal(g).has_value());
    EXPECT_NE(backend.fusion_refusal(g)->find("flat"), std::string::npos) << *backend.fusion_refusal(g);
    expect_same(backend, g, make_data(t, g, rng), "outer product");
  }
  for (unsigned inputs : {8u, 9u}) {  // x0 ^ x1 ^ ... : eight buffers fit, nine do not
    TestGraph t;
    std::int32_t root = t.name("x0", {DType::uint8, Shape{300}});
    for (unsigned i = 1; i < inputs; ++i)
      root = t.op(OpKind::bit_xor, root, t.name(fmt::format("x{}", i), {DType::uint8, Shape{300}}));
    const ValidatedGraph g = t.validate(root, kDefaultShiftOverflow);
    EXPECT_EQ(backend.fusion_refusal(g).has_value(), inputs > 8) << inputs;
    expect_same(backend, g, make_data(t, g, rng), fmt::format("{} input buffers", inputs));
  }
  {  // fourteen 64-bit one-element inputs: 28 words of root constants, 26 fit
    TestGraph t;
    std::int32_t root = t.name("a", {DType::uint64, Shape{50}});
    for (unsigned i = 0; i < 14; ++i)
      root = t.op(OpKind::bit_xor, root, t.name(fmt::format("s{}", i), {DType::uint64, Shape{}}));
    const ValidatedGraph g = t.validate(root, kDefaultShiftOverflow);
    EXPECT_TRUE(backend.fusion_refusal(g).has_value());
    expect_same(backend, g, make_data(t, g, rng), "28 scalar words");
  }
}

// Only one-element values: no buffer at all, every output from root constants.
TEST(D3d12GraphTest, GraphsOfOneElementInputs) {
  REQUIRE_GPU();
  std::mt19937_64 rng(13);
  for (std::size_t count : {1u, 5u}) {
    TestGraph t;
    const auto a = t.name("a", {DType::uint64, count == 1 ? Shape{1} : Shape{}});
    const auto b = t.name("b", {DType::uint64, Shape{count}});
    const auto root =
        t.op(OpKind::popcount, t.op(OpKind::shl, a, t.op(OpKind::bit_and, b, t.lit(63))), -1, DType::uint32);
    const ValidatedGraph g = t.validate(root, ShiftOverflow::zero);
    EXPECT_EQ(gpus().plain->fusion_refusal(g), std::nullopt);
    expect_same(*gpus().plain, g, make_data(t, g, rng), fmt::format("{} elements", count));
  }
}

}  // namespace
}  // namespace dmlbits
