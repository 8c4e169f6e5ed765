// The fused CPU executor (fused.hpp), checked byte for byte against an element-by-element
// evaluation of the program through the operator table's reference functions (OpInfo::reference,
// the executable specification), written here and not through the executor: random programs of
// 1 to 6 nodes over every element width, on every instruction set this CPU runs, with scalar
// inputs and constants in either operand position, popcounts into uint8 and uint32 (and the
// widths that have no kernel) feeding further nodes, shift counts past the width in every
// overflow mode; at sizes around the tile, the per-thread split and the streaming path, with
// unaligned inputs and outputs. Then the three expressions of issue #46 against values worked
// out with plain C++ operators, folding, buffer reuse and the refusals of malformed programs.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "dmlbits/error.hpp"
#include "fused.hpp"

namespace dmlbits {
namespace {

using Bytes = std::vector<std::byte>;
using Kind = FusedValue::Kind;

constexpr std::array<unsigned, 4> kWidths{1, 2, 4, 8};

std::uint64_t mask_of(unsigned width) { return width == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (width * 8)) - 1; }

// Values that exercise every operator: for shift counts, many just below, at and past the
// width, around 32 (the directml mode's lane) and far beyond; otherwise random bits, with the
// all-zero and all-one patterns mixed in.
std::uint64_t random_value(unsigned width, std::mt19937_64& rng) {
  const std::uint64_t r = rng();
  switch (r % 8) {
    case 0:
      return (r >> 8) % (width * 8 + 3);  // below, at and just past the width
    case 1:
      return (28 + (r >> 8) % 40) & mask_of(width);  // around 32 and 64
    case 2:
      return (r >> 8) % 2 == 0 ? 0 : mask_of(width);
    default:
      return rng() & mask_of(width);
  }
}

void put(std::byte* p, std::uint64_t v, unsigned width) { std::memcpy(p, &v, width); }
std::uint64_t get(const std::byte* p, unsigned width) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, width);
  return v;
}

// The specification: each element's nodes in order, through OpInfo::reference.
Bytes expected_output(const FusedProgram& prog, std::uint64_t n, const std::vector<const std::byte*>& inputs) {
  const FusedNode& last = prog.nodes.back();
  Bytes out(n * last.out_width);
  std::vector<std::uint64_t> v(prog.nodes.size());
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < prog.nodes.size(); ++k) {
      const FusedNode& node = prog.nodes[k];
      const auto value = [&](const FusedValue& x) -> std::uint64_t {
        switch (x.kind) {
          case Kind::input:
            return get(inputs[x.index] + (prog.input_is_scalar[x.index] ? 0 : i * prog.input_widths[x.index]),
                       prog.input_widths[x.index]);
          case Kind::node:
            return v[x.index];
          case Kind::constant:
            break;
        }
        return x.bits;
      };
      const OpInfo& info = op_info(node.op);
      const std::uint64_t b = info.arity == 2 ? value(node.b) : 0;
      v[k] = info.reference(value(node.a), b, node.width * 8, node.shift_overflow) & mask_of(node.out_width);
    }
    put(out.data() + i * last.out_width, v.back(), last.out_width);
  }
  return out;
}

// A random program of 1 to 6 nodes; each node's A is most often the node before it, so that
// most nodes feed the result.
FusedProgram random_program(std::mt19937_64& rng) {
  FusedProgram p;
  const auto pick = [&](std::size_t count) { return static_cast<std::size_t>(rng() % count); };
  // An operand of `width` bytes: an earlier node of that output width, an input (an existing
  // one of that width or a new one, scalar a quarter of the time) or a constant.
  const auto operand = [&](unsigned width, std::size_t k) -> FusedValue {
    const std::size_t choice = pick(10);
    if (choice < 4) {
      std::vector<std::uint32_t> nodes;
      for (std::size_t j = 0; j < k; ++j)
        if (p.nodes[j].out_width == width) nodes.push_back(static_cast<std::uint32_t>(j));
      if (!nodes.empty()) return {Kind::node, nodes[pick(nodes.size())], 0};
    }
    if (choice < 8) {
      std::vector<std::uint32_t> inputs;
      for (std::size_t i = 0; i < p.input_widths.size(); ++i)
        if (p.input_widths[i] == width) inputs.push_back(static_cast<std::uint32_t>(i));
      if (!inputs.empty() && pick(3) != 0) return {Kind::input, inputs[pick(inputs.size())], 0};
      p.input_widths.push_back(static_cast<std::uint8_t>(width));
      p.input_is_scalar.push_back(pick(4) == 0);
      return {Kind::input, static_cast<std::uint32_t>(p.input_widths.size() - 1), 0};
    }
    return {Kind::constant, 0, random_value(width, rng)};
  };
  const std::size_t count = 1 + pick(6);
  for (std::size_t k = 0; k < count; ++k) {
    FusedNode node;
    node.op = static_cast<OpKind>(pick(kOpCount));
    node.shift_overflow = shift_overflow_modes()[pick(shift_overflow_modes().size())];
    if (k > 0 && pick(10) < 7) {
      node.a = {Kind::node, static_cast<std::uint32_t>(k - 1), 0};
      node.width = p.nodes[k - 1].out_width;
    } else {
      node.width = static_cast<std::uint8_t>(kWidths[pick(4)]);
      node.a = operand(node.width, k);
    }
    if (op_info(node.op).arity == 2) {
      node.b = operand(node.width, k);
      if (pick(3) == 0) std::swap(node.a, node.b);  // a constant or scalar as A too
    }
    // popcount: mostly into the widths with kernels, 1 and 4; sometimes 2 or 8 (the reference).
    node.out_width = node.op != OpKind::popcount ? node.width
                     : pick(5) == 0              ? static_cast<std::uint8_t>(pick(2) == 0 ? 2 : 8)
                                                 : static_cast<std::uint8_t>(pick(2) == 0 ? 1 : 4);
    p.nodes.push_back(node);
  }
  return p;
}

// Inputs of n elements (one if scalar) at an address `skew` bytes past an alignment of 64.
struct Inputs {
  std::vector<Bytes> storage;
  std::vector<const std::byte*> pointers;
};

Inputs random_inputs(const FusedProgram& p, std::uint64_t n, std::mt19937_64& rng) {
  Inputs in;
  for (std::size_t i = 0; i < p.input_widths.size(); ++i) {
    const unsigned w = p.input_widths[i];
    const std::uint64_t count = p.input_is_scalar[i] ? 1 : n;
    const std::size_t skew = rng() % 8;
    in.storage.emplace_back(count * w + skew + 64);
    auto* base = in.storage.back().data();
    base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64 + skew;
    for (std::uint64_t e = 0; e < count; ++e) put(base + e * w, random_value(w, rng), w);
    in.pointers.push_back(base);
  }
  return in;
}

// Runs `runner` over n elements into an output `skew` bytes past an alignment of 64, with
// guard bytes around it, and compares with `expected`; returns whether they match.
::testing::AssertionResult runs_as_expected(const FusedRunner& runner, std::uint64_t n, const Inputs& in,
                                            const Bytes& expected, unsigned threads, std::size_t skew) {
  const std::size_t bytes = expected.size();
  Bytes storage(bytes + 64 + skew + 64, std::byte{0xA5});
  std::byte* out = storage.data() + (64 - reinterpret_cast<std::uintptr_t>(storage.data()) % 64) % 64 + skew;
  const std::vector<const void*> ptrs(in.pointers.begin(), in.pointers.end());
  runner.run(n, ptrs, out, threads);
  for (std::size_t i = 0; i < bytes; ++i)
    if (out[i] != expected[i])
      return ::testing::AssertionFailure()
             << "byte " << i << " (element of " << bytes / std::max<std::uint64_t>(n, 1) << " bytes) is "
             << static_cast<int>(out[i]) << ", expected " << static_cast<int>(expected[i]);
  for (std::byte* g = storage.data(); g < out; ++g)
    if (*g != std::byte{0xA5}) return ::testing::AssertionFailure() << "wrote before the output";
  for (std::byte* g = out + bytes; g < storage.data() + storage.size(); ++g)
    if (*g != std::byte{0xA5}) return ::testing::AssertionFailure() << "wrote past the output";
  return ::testing::AssertionSuccess();
}

std::string describe(const FusedProgram& p) {
  std::string s;
  for (std::size_t k = 0; k < p.nodes.size(); ++k) {
    const FusedNode& n = p.nodes[k];
    const auto v = [&](const FusedValue& x) {
      switch (x.kind) {
        case Kind::input:
          return "in" + std::to_string(x.index) + (p.input_is_scalar[x.index] ? "(scalar)" : "");
        case Kind::node:
          return "n" + std::to_string(x.index);
        case Kind::constant:
          break;
      }
      return std::to_string(x.bits);
    };
    s += "n" + std::to_string(k) + " = " + std::string(op_info(n.op).verb) + "/x" + std::to_string(n.width * 8) +
         "->x" + std::to_string(n.out_width * 8) + "/" + std::string(shift_overflow_name(n.shift_overflow)) + "(" +
         v(n.a) + (op_info(n.op).arity == 2 ? ", " + v(n.b) : std::string()) + "); ";
  }
  return s;
}

// Sizes around the tile, its multiples and the 64-element thread split, around the register
// path's blocks (256 bytes: 32 to 256 elements) and a head of up to 63 elements before an aligned
// output, and odd ones.
std::vector<std::uint64_t> sizes_for(std::uint64_t t) {
  return {0,   1,     31, 32,    33,        63,        64,        65,         127,       255, 256,  257, 319,
          513, t - 1, t,  t + 1, 2 * t - 1, 2 * t + 3, 3 * t + 1, 3 * t + 65, 6 * t + 5, 777, 1000, 4099};
}

// The runners a program is checked with: each set this CPU runs on its own kernels, with the
// register path (at every size) and on the tiles alone, and the widest with the per-operation
// choice, as CpuBackend picks them.
std::vector<FusedRunner> runners_for(const FusedProgram& p, FusedOptions options) {
  std::vector<FusedRunner> runners;
  options.register_min_bytes = 0;
  for (const Isa isa : supported_isas()) {
    runners.emplace_back(p, isa, false, options);
    FusedOptions tiles = options;
    tiles.register_path = false;
    if (runners.back().register_path()) runners.emplace_back(p, isa, false, tiles);
  }
  runners.emplace_back(p, host_isa(), true, options);
  return runners;
}

void check_program(const FusedProgram& p, FusedOptions options, std::mt19937_64& rng) {
  SCOPED_TRACE(describe(p));
  const std::vector<FusedRunner> runners = runners_for(p, options);
  for (const std::uint64_t n : sizes_for(runners.front().tile_elements())) {
    const Inputs in = random_inputs(p, n, rng);
    const Bytes expected = expected_output(p, n, in.pointers);
    for (std::size_t r = 0; r < runners.size(); ++r)
      for (const unsigned threads : {1u, 2u, 3u})
        ASSERT_TRUE(runs_as_expected(runners[r], n, in, expected, threads, rng() % 8))
            << "n " << n << ", runner " << r << ", " << threads << " threads, tile " << runners[r].tile_elements();
  }
}

void check_random_programs(int programs, std::uint64_t seed, FusedOptions options) {
  std::mt19937_64 rng(seed);
  for (int k = 0; k < programs; ++k) {
    check_program(random_program(rng), options, rng);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// Small tiles (64 to 256 elements), so that every size above crosses several.
TEST(FusedTest, RandomProgramsMatchTheReferenceAtSmallTiles) { check_random_programs(300, 1, {.tile_bytes = 512}); }

// The default tile.
TEST(FusedTest, RandomProgramsMatchTheReferenceAtTheDefaultTile) { check_random_programs(25, 2, {}); }

// Every output streamed (non-temporal stores from the first tile on), at unaligned addresses.
TEST(FusedTest, RandomProgramsMatchTheReferenceWhenStreamed) {
  check_random_programs(100, 3, {.tile_bytes = 1024, .stream_min_bytes = 0});
}

// Each operator at each width, alone and with a scalar or constant in either place, through
// the default choice: every kernel the executor can pick is run at least once on a tile.
TEST(FusedTest, EveryOperatorAtEveryWidthAndLayout) {
  std::mt19937_64 rng(4);
  for (const OpInfo& info : op_table())
    for (const unsigned w : kWidths)
      for (const unsigned ow :
           info.kind == OpKind::popcount ? std::vector<unsigned>{1, 2, 4, 8} : std::vector<unsigned>{w})
        for (int layout = 0; layout < (info.arity == 2 ? 5 : 1); ++layout) {
          FusedProgram p;
          p.input_widths = {static_cast<std::uint8_t>(w), static_cast<std::uint8_t>(w)};
          p.input_is_scalar = {false, layout == 3};
          FusedNode node{info.kind, static_cast<std::uint8_t>(w), static_cast<std::uint8_t>(ow), {}, {}};
          node.a = {Kind::input, 0, 0};
          node.b = {Kind::input, 1, 0};
          if (layout == 1) node.b = {Kind::constant, 0, random_value(w, rng)};
          if (layout == 2) node.a = {Kind::constant, 0, random_value(w, rng)};
          if (layout == 4) std::swap(node.a, node.b);  // the scalar input as A
          if (layout == 4) p.input_is_scalar = {false, true};
          for (const ShiftOverflow mode : shift_overflow_modes()) {
            node.shift_overflow = mode;
            p.nodes = {node};
            SCOPED_TRACE(describe(p));
            for (const FusedRunner& runner : runners_for(p, {.tile_bytes = 256})) {
              const std::uint64_t n = 5 * runner.tile_elements() + 13;
              const Inputs in = random_inputs(p, n, rng);
              ASSERT_TRUE(runs_as_expected(runner, n, in, expected_output(p, n, in.pointers), 2, 3));
            }
          }
        }
}

// The expressions of issue #46's targets, against plain C++ operators on uint32.
// Over 8 MiB of uint32, so that the output is streamed as at the default bound.
TEST(FusedTest, IssueExpressionsMatchPlainOperators) {
  constexpr std::uint64_t n = (std::uint64_t{8} << 20) / 4 + 1003;
  std::mt19937 rng(5);
  std::vector<std::uint32_t> a(n), b(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    a[i] = static_cast<std::uint32_t>(rng());
    b[i] = static_cast<std::uint32_t>(rng());
  }
  const std::vector<const void*> ab{a.data(), b.data()};
  const std::vector<const void*> a_only{a.data()};

  FusedProgram pop;  // popcount(a ^ b) into uint8
  pop.input_widths = {4, 4};
  pop.input_is_scalar = {false, false};
  pop.nodes = {{OpKind::bit_xor, 4, 4, {Kind::input, 0, 0}, {Kind::input, 1, 0}},
               {OpKind::popcount, 4, 1, {Kind::node, 0, 0}, {}}};
  FusedProgram andnot = pop;  // a & ~b
  andnot.nodes = {{OpKind::bit_not, 4, 4, {Kind::input, 1, 0}, {}},
                  {OpKind::bit_and, 4, 4, {Kind::input, 0, 0}, {Kind::node, 0, 0}}};
  FusedProgram byte;  // (a >> 3) & 0xff
  byte.input_widths = {4};
  byte.input_is_scalar = {false};
  byte.nodes = {{OpKind::shr, 4, 4, {Kind::input, 0, 0}, {Kind::constant, 0, 3}},
                {OpKind::bit_and, 4, 4, {Kind::node, 0, 0}, {Kind::constant, 0, 0xff}}};

  // Every set with and without the register path, which the SIMD sets take for all three.
  const std::vector<FusedRunner> pops = runners_for(pop, {}), andnots = runners_for(andnot, {}),
                                 bytes = runners_for(byte, {});
  for (std::size_t r = 0; r < pops.size(); ++r) {
    SCOPED_TRACE("runner " + std::to_string(r));
    if (r == 0) {
      EXPECT_FALSE(pops[r].register_path());  // scalar
    } else if (r % 2 == 1 || r + 1 == pops.size()) {
      EXPECT_TRUE(pops[r].register_path());
      EXPECT_TRUE(andnots[r].register_path());
      EXPECT_TRUE(bytes[r].register_path());
    }
    for (const unsigned threads : {1u, 2u}) {
      std::vector<std::uint8_t> counts(n);
      pops[r].run(n, ab, counts.data(), threads);
      std::vector<std::uint32_t> r1(n), r2(n);
      andnots[r].run(n, ab, r1.data(), threads);
      bytes[r].run(n, a_only, r2.data(), threads);
      for (std::uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(counts[i], std::popcount(a[i] ^ b[i])) << i;
        ASSERT_EQ(r1[i], a[i] & ~b[i]) << i;
        ASSERT_EQ(r2[i], (a[i] >> 3) & 0xffu) << i;
      }
    }
  }
}

// The register path runs x & ~y as one and_not where ~y has no other reader and y is an input
// or a constant: those shapes, and the ones it must leave alone (~y read twice, y a node).
TEST(FusedTest, AndNotShapesMatchTheReference) {
  std::mt19937_64 rng(6);
  for (const unsigned w : kWidths) {
    const auto W = static_cast<std::uint8_t>(w);
    FusedProgram p;
    p.input_widths = {W, W, W};
    p.input_is_scalar = {false, false, true};
    const FusedValue a{Kind::input, 0, 0}, b{Kind::input, 1, 0}, s{Kind::input, 2, 0};
    const auto node = [](std::uint32_t k) { return FusedValue{Kind::node, k, 0}; };
    const std::vector<std::vector<FusedNode>> shapes{
        {{OpKind::bit_not, W, W, b, {}}, {OpKind::bit_and, W, W, a, node(0)}},  // a & ~b
        {{OpKind::bit_not, W, W, b, {}}, {OpKind::bit_and, W, W, node(0), a}},  // ~b & a
        {{OpKind::bit_not, W, W, s, {}}, {OpKind::bit_xor, W, W, a, b}, {OpKind::bit_and, W, W, node(1), node(0)}},
        {{OpKind::bit_not, W, W, {Kind::constant, 0, 5}, {}},
         {OpKind::bit_and, W, W, a, b},  // a folded not
         {OpKind::bit_and, W, W, node(1), node(0)}},
        {{OpKind::bit_not, W, W, b, {}}, {OpKind::bit_and, W, W, a, node(0)}, {OpKind::bit_or, W, W, node(1), node(0)}},
        {{OpKind::bit_xor, W, W, a, b}, {OpKind::bit_not, W, W, node(0), {}}, {OpKind::bit_and, W, W, a, node(1)}},
        {{OpKind::bit_not, W, W, b, {}}, {OpKind::bit_and, W, W, a, node(0)}, {OpKind::popcount, W, 1, node(1), {}}},
    };
    for (const auto& nodes : shapes) {
      p.nodes = nodes;
      check_program(p, {.tile_bytes = 512}, rng);
      check_program(p, {.tile_bytes = 1024, .stream_min_bytes = 0}, rng);
      if (HasFatalFailure()) return;
    }
  }
}

// The register path takes programs whose nodes are all of one width, the last perhaps a popcount
// into uint8 or uint32, on the SIMD sets; the rest run on the tiles alone.
TEST(FusedTest, TheRegisterPathTakesProgramsOfOneWidth) {
  FusedProgram p;
  p.input_widths = {2, 2};
  p.input_is_scalar = {false, true};
  p.nodes = {{OpKind::shl, 2, 2, {Kind::input, 0, 0}, {Kind::input, 1, 0}},
             {OpKind::bit_or, 2, 2, {Kind::node, 0, 0}, {Kind::constant, 0, 7}},
             {OpKind::popcount, 2, 4, {Kind::node, 1, 0}, {}}};
  for (const Isa isa : supported_isas()) {
    SCOPED_TRACE(std::string(isa_name(isa)));
    const bool simd = isa != Isa::scalar;
    EXPECT_EQ(FusedRunner(p, isa, false).register_path(), simd);
    EXPECT_FALSE(FusedRunner(p, isa, false, {.register_path = false}).register_path());
    FusedProgram q = p;  // a popcount into uint16: no popcount kernel writes it
    q.nodes[2].out_width = 2;
    EXPECT_FALSE(FusedRunner(q, isa, false).register_path());
    q = p;  // a popcount before the last node
    q.nodes.push_back({OpKind::bit_not, 4, 4, {Kind::node, 2, 0}, {}});
    EXPECT_FALSE(FusedRunner(q, isa, false).register_path());
    q = p;  // no popcount: every node of the one width
    q.nodes[2].out_width = 2;
    q.nodes[2].op = OpKind::bit_not;
    EXPECT_EQ(FusedRunner(q, isa, false).register_path(), simd);
  }
}

TEST(FusedTest, ConstantNodesAreFoldedAndUnusedNodesDropped) {
  FusedProgram p;
  p.input_widths = {2};
  p.input_is_scalar = {false};
  p.nodes = {{OpKind::shl, 2, 2, {Kind::constant, 0, 1}, {Kind::constant, 0, 4}},  // 16
             {OpKind::popcount, 2, 4, {Kind::input, 0, 0}, {}},                    // unused
             {OpKind::bit_or, 2, 2, {Kind::node, 0, 0}, {Kind::constant, 0, 1}},   // 17
             {OpKind::bit_xor, 2, 2, {Kind::input, 0, 0}, {Kind::node, 2, 0}}};
  const FusedRunner runner(p, best_isa(), true);
  EXPECT_EQ(runner.kernel_nodes(), 1u);
  EXPECT_EQ(runner.tile_buffers(), 0u);
  const std::vector<std::uint16_t> a{0, 1, 16, 17, 0xffff};
  std::vector<std::uint16_t> out(a.size());
  const std::vector<const void*> in{a.data()};
  runner.run(a.size(), in, out.data(), 1);
  EXPECT_EQ(out, (std::vector<std::uint16_t>{17, 16, 1, 0, 0xffee}));
}

TEST(FusedTest, AUniformResultFillsTheOutput) {
  FusedProgram p;  // popcount(s ^ 0x0f) of a scalar input s, into uint32
  p.input_widths = {1};
  p.input_is_scalar = {true};
  p.nodes = {{OpKind::bit_xor, 1, 1, {Kind::input, 0, 0}, {Kind::constant, 0, 0x0f}},
             {OpKind::popcount, 1, 4, {Kind::node, 0, 0}, {}}};
  const FusedRunner runner(p, best_isa(), true);
  EXPECT_EQ(runner.kernel_nodes(), 0u);
  for (const std::uint8_t s : {std::uint8_t{0x0f}, std::uint8_t{0xf0}, std::uint8_t{0x01}}) {
    std::vector<std::uint32_t> out(1001, 99);
    const std::vector<const void*> in{&s};
    runner.run(1000, in, out.data(), 2);
    const auto expect = static_cast<std::uint32_t>(s == 0x0f ? 0 : s == 0xf0 ? 8 : 3);
    EXPECT_EQ(std::count(out.begin(), out.end() - 1, expect), 1000);
    EXPECT_EQ(out.back(), 99u);
  }
}

// A chain of unary nodes needs two tile buffers whatever its length: each node's buffer is
// free again once the next has read it.
TEST(FusedTest, TileBuffersAreReused) {
  FusedProgram p;
  p.input_widths = {8};
  p.input_is_scalar = {false};
  p.nodes.push_back({OpKind::bit_not, 8, 8, {Kind::input, 0, 0}, {}});
  for (std::uint32_t k = 1; k < 6; ++k) p.nodes.push_back({OpKind::bit_not, 8, 8, {Kind::node, k - 1, 0}, {}});
  const FusedRunner runner(p, best_isa(), true);
  EXPECT_EQ(runner.kernel_nodes(), 6u);
  EXPECT_EQ(runner.tile_buffers(), 2u);
  const std::vector<std::uint64_t> a{0, 5, ~std::uint64_t{0}};
  std::vector<std::uint64_t> out(3);
  const std::vector<const void*> in{a.data()};
  runner.run(3, in, out.data(), 1);
  EXPECT_EQ(out, a);  // six nots
}

TEST(FusedTest, TheTileIsWholeGroupsOf64Elements) {
  FusedProgram p;
  p.input_widths = {8};
  p.input_is_scalar = {false};
  p.nodes = {{OpKind::popcount, 8, 1, {Kind::input, 0, 0}, {}}};
  EXPECT_EQ(FusedRunner(p, Isa::scalar, false, {.tile_bytes = 8192}).tile_elements(), 1024u);
  EXPECT_EQ(FusedRunner(p, Isa::scalar, false, {.tile_bytes = 1000}).tile_elements(), 64u);
  EXPECT_EQ(FusedRunner(p, Isa::scalar, false, {.tile_bytes = 1}).tile_elements(), 64u);
}

Errc error_of(const FusedProgram& p) {
  try {
    FusedRunner(p, Isa::scalar, false);
  } catch (const Error& e) {
    return e.code();
  }
  return Errc::mismatch;  // anything but internal: no refusal
}

TEST(FusedTest, RefusesMalformedPrograms) {
  FusedProgram good;
  good.input_widths = {4, 4};
  good.input_is_scalar = {false, false};
  good.nodes = {{OpKind::bit_xor, 4, 4, {Kind::input, 0, 0}, {Kind::input, 1, 0}}};
  EXPECT_NO_THROW(FusedRunner(good, Isa::scalar, false));

  FusedProgram p = good;
  p.nodes.clear();
  EXPECT_EQ(error_of(p), Errc::internal) << "no nodes";
  p = good;
  p.input_widths[1] = 2;
  EXPECT_EQ(error_of(p), Errc::internal) << "an input of another width";
  p = good;
  p.input_widths[1] = 3;
  EXPECT_EQ(error_of(p), Errc::internal) << "not an element width";
  p = good;
  p.nodes[0].b = {Kind::input, 2, 0};
  EXPECT_EQ(error_of(p), Errc::internal) << "an input past the last";
  p = good;
  p.nodes[0].b = {Kind::node, 0, 0};
  EXPECT_EQ(error_of(p), Errc::internal) << "the node itself";
  p = good;
  p.nodes[0].b = {Kind::constant, 0, std::uint64_t{1} << 32};
  EXPECT_EQ(error_of(p), Errc::internal) << "a constant wider than the node";
  p = good;
  p.nodes[0].out_width = 1;
  EXPECT_EQ(error_of(p), Errc::internal) << "xor narrowing";
  p = good;
  p.nodes.push_back({OpKind::popcount, 4, 1, {Kind::node, 0, 0}, {}});
  p.nodes.push_back({OpKind::bit_not, 4, 4, {Kind::node, 1, 0}, {}});  // reads uint8 counts as uint32
  EXPECT_EQ(error_of(p), Errc::internal) << "a node of another width";
  p = good;
  p.input_is_scalar.pop_back();
  EXPECT_EQ(error_of(p), Errc::internal) << "scalar flags";
  p = good;
  p.nodes.assign(kMaxFusedNodes + 1, {OpKind::bit_not, 4, 4, {Kind::input, 0, 0}, {}});
  EXPECT_EQ(error_of(p), Errc::internal) << "too many nodes";

  const FusedRunner runner(good, Isa::scalar, false);
  std::uint32_t x = 0;
  const std::vector<const void*> one{&x};
  try {
    runner.run(1, one, &x, 1);
    ADD_FAILURE() << "ran with one input of two";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal);
  }
}

}  // namespace
}  // namespace dmlbits
