// The D3D12 backend, differential against the reference backend (the executable specification):
// every (op, dtype, output dtype, shift mode) of the support table, derived from the op table,
// on random tensors of sizes 0, 1, 3, 4, 5, 63, 64, 65 and 4097 (tails of words and groups), an
// 8-d broadcast with stride-0 dimensions in both inputs, and a scalar B; a few combinations
// beyond 65535 groups in one grid dimension; chunking (the buffer limit lowered to 4 KiB) of
// packed runs, boxes with whole and sliced inputs, and in place; adapter selection and errors.
// Results must be byte-identical.
//
// Needs an adapter (lavapipe is one). Without one the tests are skipped with the reason, unless
// DMLBITS_REQUIRE_D3D12=1 (CI), where a missing adapter fails.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend.hpp"
#include "make_backend.hpp"
#include "unit_support.hpp"
#include "cpu_reference.hpp"
#include "d3d12_backend.hpp"
#include "dmlbits/error.hpp"
#include "gpu_kernel.hpp"
#include "dmlbits/ops.hpp"
#include "validate.hpp"

#include "adapters.hpp"
#include "d3d12_device.hpp"
#ifdef DMLBITS_HAVE_D3D12
#include "../../lib/src/d3d12/copy_team.hpp"
#include "../../lib/src/d3d12/d3d12_runtime.hpp"  // the runtime's own interface, for error paths
#endif

namespace dmlbits {
namespace {

using Bytes = std::vector<std::byte>;

bool d3d12_required() {
  const char* v = std::getenv("DMLBITS_REQUIRE_D3D12");
  return v && std::string(v) == "1";
}

// The process's backend on the default adapter, or why there is none.
struct Gpu {
  std::unique_ptr<D3d12Backend> backend;
  std::string reason;
};
Gpu& gpu() {
  static Gpu g = [] {
    Gpu out;
    try {
      out.backend = std::make_unique<D3d12Backend>();
    } catch (const Error& e) {
      out.reason = e.what();
    }
    return out;
  }();
  return g;
}

#define REQUIRE_GPU()                                                                                   \
  do {                                                                                                  \
    if (!gpu().backend) {                                                                               \
      if (d3d12_required()) FAIL() << "DMLBITS_REQUIRE_D3D12=1 but no D3D12 adapter: " << gpu().reason; \
      GTEST_SKIP() << "no D3D12 adapter: " << gpu().reason;                                             \
    }                                                                                                   \
  } while (0)

// One row of the support table at the newest level.
struct Combo {
  OpKind op;
  DType dtype;
  DType out;
  ShiftOverflow shift;
};

// The operators the d3d12 backend runs: those with a shader family in the table.
std::vector<OpKind> ops_with_shaders() {
  std::vector<OpKind> ops;
  for (const OpInfo& op : op_table())
    if (op.shader != ShaderFamily::none) ops.push_back(op.kind);
  return ops;
}

std::vector<Combo> all_combos() {
  std::vector<Combo> out;
  for (const OpInfo& op : op_table()) {
    const OpTier* tier = op.tier_at(newest_feature_level());
    if (!tier || op.shader == ShaderFamily::none) continue;  // shaders are optional: d3d12 refuses the op
    for (const DTypeInfo& d : dtype_table()) {
      if (!tier->inputs.contains(d.dtype)) continue;
      std::vector<DType> outs;
      if (tier->outputs.empty()) outs.push_back(d.dtype);
      for (const DTypeInfo& o : dtype_table())
        if (tier->outputs.contains(o.dtype)) outs.push_back(o.dtype);
      const bool shift = op.shift;
      for (DType o : outs)
        for (ShiftOverflow m : shift_overflow_modes())
          if (shift || m == ShiftOverflow::zero) out.push_back({op.kind, d.dtype, o, m});
    }
  }
  return out;
}

std::string combo_name(const Combo& c) {
  std::string s = fmt::format("{}_{}", op_info(c.op).verb, dtype_info(c.dtype).numpy_name);
  if (c.op == OpKind::popcount) s += fmt::format("_to_{}", dtype_info(c.out).numpy_name);
  if (c.op == OpKind::shl || c.op == OpKind::shr) s += "_" + std::string(shift_overflow_name(c.shift));
  return s;
}

// Random bytes; for a shift count, values mostly around the element width (both sides of it),
// some from 0 to 99 (around 32 and 64, where the directml mode's 32-bit lane wraps).
Bytes random_tensor(std::mt19937_64& rng, std::size_t elements, std::size_t width, bool shift_count) {
  Bytes b(elements * width);
  for (std::size_t i = 0; i < b.size(); i += 8) {
    const std::uint64_t r = rng();
    std::memcpy(&b[i], &r, std::min<std::size_t>(8, b.size() - i));
  }
  if (shift_count)
    for (std::size_t i = 0; i < elements; ++i) {
      if (rng() % 8 == 0) continue;  // keep a few huge counts
      std::memset(&b[i * width], 0, width);
      b[i * width] = static_cast<std::byte>(rng() % 4 == 0 ? rng() % 100 : rng() % (width * 16 + 2));
    }
  return b;
}

ValidatedOp make_op(const Combo& c, const std::vector<Shape>& shapes, bool in_place = false) {
  OpRequest r;
  r.op = c.op;
  for (const auto& s : shapes) r.inputs.push_back({c.dtype, s});
  if (c.op == OpKind::popcount) r.out_dtype = c.out;
  r.shift_overflow = c.shift;
  r.in_place = in_place;
  return validate(r);
}

std::string hex(const std::byte* p, std::size_t n) {
  std::string s = "0x";
  for (std::size_t i = n; i-- > 0;) s += fmt::format("{:02x}", static_cast<unsigned>(p[i]));
  return s;
}

// Runs `op` on `backend` and on the reference and compares; reports the first difference with
// its inputs (flat output index; inputs shown where they are full-size).
void expect_same(Backend& backend, const ValidatedOp& op, const std::vector<Bytes>& inputs, const std::string& what) {
  const std::size_t out_size = dtype_info(op.output_dtype()).size;
  const std::size_t in_size = dtype_info(op.input_dtype()).size;
  const std::size_t n = op.output_shape().element_count();
  ExecuteBuffers gb, rb;
  for (const auto& in : inputs) {
    gb.inputs.push_back({in.data(), in.size()});
    rb.inputs.push_back({in.data(), in.size()});
  }
  Bytes got(n * out_size, std::byte{0xAB}), want(n * out_size, std::byte{0xCD});
  gb.output = {got.data(), got.size()};
  rb.output = {want.data(), want.size()};
  backend.run(op, gb);
  CpuReferenceBackend().run(op, rb);
  if (got == want) return;
  std::size_t i = 0;
  while (i < n && std::memcmp(&got[i * out_size], &want[i * out_size], out_size) == 0) ++i;
  std::string ins;
  for (const auto& in : inputs) ins += in.size() == n * in_size ? " " + hex(&in[i * in_size], in_size) : " (broadcast)";
  ADD_FAILURE() << what << ": element " << i << " of " << n << " inputs" << ins << ": d3d12 gave "
                << hex(&got[i * out_size], out_size) << ", the reference " << hex(&want[i * out_size], out_size);
}

// A streamed run's operands and output in memory, for run_staged: checks what the backend
// asks of it (reads within each input, each output element written once, in order unless
// writes may be concurrent, written() rising to the end) and can fail a read or a written()
// call to stop the run.
class MemoryStagedIo final : public StagedIo {
 public:
  MemoryStagedIo(const ValidatedOp& op, const std::vector<Bytes>& inputs, Bytes& out, bool concurrent)
      : inputs_(inputs),
        out_(out),
        concurrent_(concurrent),
        in_size_(dtype_info(op.input_dtype()).size),
        out_size_(dtype_info(op.output_dtype()).size),
        count_(op.output_shape().element_count()),
        seen_(count_, 0) {}
  bool concurrent_reads() const override { return concurrent_; }
  bool concurrent_writes() const override { return concurrent_; }
  void read_input(std::size_t i, std::uint64_t first, std::span<std::byte> dst) override {
    std::lock_guard lock(m_);
    if (fail_read_at && reads_++ == *fail_read_at) throw Error(Errc::io, "test: read failed");
    ASSERT_LT(i, inputs_.size());
    ASSERT_EQ(dst.size() % in_size_, 0u);
    ASSERT_LE(first * in_size_ + dst.size(), inputs_[i].size()) << "input " << i << " read past its end";
    std::memcpy(dst.data(), inputs_[i].data() + first * in_size_, dst.size());
  }
  void write_output(std::uint64_t first, std::span<const std::byte> src) override {
    std::lock_guard lock(m_);
    ASSERT_EQ(src.size() % out_size_, 0u);
    const std::uint64_t n = src.size() / out_size_;
    ASSERT_LE(first + n, count_);
    if (!concurrent_) {
      EXPECT_EQ(first, next_) << "writes out of order";
    }
    next_ = first + n;
    for (std::uint64_t e = first; e < first + n; ++e) ++seen_[e];
    std::memcpy(out_.data() + first * out_size_, src.data(), src.size());
  }
  void written(std::uint64_t done) override {
    EXPECT_GT(done, done_);
    EXPECT_LE(done, count_);
    done_ = done;
    if (fail_written_at && ++pieces_ == *fail_written_at) throw Error(Errc::interrupted, "test: interrupted");
  }
  // After a run that did not throw: every element written once, written() at the end.
  void expect_complete(const std::string& what) const {
    EXPECT_EQ(done_, count_) << what;
    EXPECT_EQ(std::count(seen_.begin(), seen_.end(), 1), static_cast<std::ptrdiff_t>(count_)) << what;
  }
  std::optional<unsigned> fail_read_at, fail_written_at;

 private:
  std::mutex m_;
  const std::vector<Bytes>& inputs_;
  Bytes& out_;
  bool concurrent_;
  std::size_t in_size_, out_size_;
  std::uint64_t count_, next_ = 0, done_ = 0;
  std::vector<int> seen_;
  unsigned reads_ = 0, pieces_ = 0;
};

// The backend with streamed pieces of 64 elements (the least), three in flight (a software
// adapter keeps one by default), so that small runs cross piece and slot boundaries.
D3d12Backend& staged_backend() {
  static D3d12Backend b = [] {
    D3d12BackendOptions o;
    o.stream_piece_bytes = 1;
    o.stream_in_flight = 3;
    return D3d12Backend(o);
  }();
  return b;
}

// run_staged on `op` against the reference run.
void expect_same_staged(const ValidatedOp& op, const std::vector<Bytes>& inputs, bool concurrent,
                        const std::string& what) {
  const std::size_t out_size = dtype_info(op.output_dtype()).size;
  const std::size_t n = op.output_shape().element_count();
  Bytes got(n * out_size, std::byte{0xAB}), want(n * out_size, std::byte{0xCD});
  MemoryStagedIo io(op, inputs, got, concurrent);
  ASSERT_TRUE(staged_backend().run_staged(op, io)) << what;
  io.expect_complete(what);
  ExecuteBuffers rb;
  for (const auto& in : inputs) rb.inputs.push_back({in.data(), in.size()});
  rb.output = {want.data(), want.size()};
  CpuReferenceBackend().run(op, rb);
  if (got == want) return;
  std::size_t i = 0;
  while (i < n && std::memcmp(&got[i * out_size], &want[i * out_size], out_size) == 0) ++i;
  ADD_FAILURE() << what << " (staged): element " << i << " of " << n << ": d3d12 gave "
                << hex(&got[i * out_size], out_size) << ", the reference " << hex(&want[i * out_size], out_size);
}

// One combination on every shape.
void check_combo(const Combo& c) {
  const bool binary = op_info(c.op).arity == 2;
  const bool shift = c.op == OpKind::shl || c.op == OpKind::shr;
  const std::size_t w = dtype_info(c.dtype).size;
  std::mt19937_64 rng(std::hash<std::string>{}(combo_name(c)));
  D3d12Backend& b = *gpu().backend;

  // Packed: every input has the output's shape. Sizes around one 16-byte unit of output and
  // around one thread group's units (gpu_kernel.hpp).
  const std::uint64_t unit = 16 / dtype_info(c.out).size, group = unit * gpu::kThreadGroupSize;
  for (std::uint64_t n :
       {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{3}, unit - 1, unit, unit + 1, std::uint64_t{63},
        std::uint64_t{64}, std::uint64_t{65}, group - 1, group, group + 1, std::uint64_t{4097}}) {
    std::vector<Bytes> in{random_tensor(rng, n, w, false)};
    std::vector<Shape> shapes{Shape({n})};
    if (binary) {
      in.push_back(random_tensor(rng, n, w, shift));
      shapes.push_back(Shape({n}));
    }
    expect_same(b, make_op(c, shapes), in, fmt::format("{} packed n={}", combo_name(c), n));
  }
  // Streamed (run_staged) in pieces of 64 elements through the three slots: no piece, one
  // element, around one piece, around the slots' first round, past two rounds with a tail;
  // broadcast operands (B, then A, of one element); in order and with concurrent reads and
  // writes allowed.
  for (std::uint64_t n : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{63}, std::uint64_t{64}, std::uint64_t{65},
                          std::uint64_t{191}, std::uint64_t{192}, std::uint64_t{193}, std::uint64_t{64 * 7 + 5}}) {
    std::vector<Bytes> in{random_tensor(rng, n, w, false)};
    std::vector<Shape> shapes{Shape({n})};
    if (binary) {
      in.push_back(random_tensor(rng, n, w, shift));
      shapes.push_back(Shape({n}));
    }
    expect_same_staged(make_op(c, shapes), in, n % 2 == 1, fmt::format("{} staged n={}", combo_name(c), n));
    if (binary && n > 1) {
      const Bytes scalar = random_tensor(rng, 1, w, shift);
      expect_same_staged(make_op(c, {Shape({n}), Shape({})}), {in[0], scalar}, false,
                         fmt::format("{} staged n={} scalar B", combo_name(c), n));
      expect_same_staged(make_op(c, {Shape({}), Shape({n})}), {random_tensor(rng, 1, w, false), in[1]}, true,
                         fmt::format("{} staged n={} scalar A", combo_name(c), n));
    }
  }
  if (!binary) {
    // Unary ops are always packed; an 8-d shape still runs (as one flat run).
    const Shape s({2, 1, 3, 2, 1, 4, 3, 5});
    expect_same(b, make_op(c, {s}), {random_tensor(rng, s.element_count(), w, false)}, combo_name(c) + " 8-d");
    return;
  }
  // Strided: 8-d, both inputs broadcast along different dimensions.
  {
    const Shape a({2, 1, 3, 1, 2, 1, 3, 5}), bs({1, 2, 1, 2, 1, 2, 3, 1});
    expect_same(b, make_op(c, {a, bs}),
                {random_tensor(rng, a.element_count(), w, false), random_tensor(rng, bs.element_count(), w, shift)},
                combo_name(c) + " 8-d broadcast");
  }
  // Strided: B one element (0-d), A with a tail.
  {
    const Shape a({3, 67});
    expect_same(b, make_op(c, {a, Shape({})}),
                {random_tensor(rng, a.element_count(), w, false), random_tensor(rng, 1, w, shift)},
                combo_name(c) + " scalar B");
  }
}

// One test per operator (each ctest test is a process, and each process creates a device),
// covering every combination of that operator.
class D3d12Differential : public ::testing::TestWithParam<OpKind> {};

TEST_P(D3d12Differential, MatchesReference) {
  REQUIRE_GPU();
  int combos = 0;
  for (const Combo& c : all_combos())
    if (c.op == GetParam()) {
      check_combo(c);
      ++combos;
    }
  EXPECT_GT(combos, 0);
}

INSTANTIATE_TEST_SUITE_P(EveryOperator, D3d12Differential, ::testing::ValuesIn(ops_with_shaders()),
                         [](const ::testing::TestParamInfo<OpKind>& p) { return std::string(op_info(p.param).verb); });

TEST(D3d12BackendTest, CoversEverySupportedCombination) {
  // 3 x 11 (and, or, xor) + 11 (not) + 11 x 2 (popcount) + 2 x 4 x 3 (shifts, 3 modes).
  EXPECT_EQ(all_combos().size(), 90u);
}

// Large runs with tails, packed at several widths and strided (a scalar B), in one dispatch
// each. Threads that loop over units past the largest grid (65535 groups) are checked by
// gpu_kernel_test (ThreadsLoopOverUnitsPastTheGrid): through the backend that needs over 16M
// units, 67 MB of 8-bit elements, 10 s more on lavapipe, which does not enforce the limit.
TEST(D3d12BackendTest, LargeRunsWithTails) {
  REQUIRE_GPU();
  D3d12Backend& b = *gpu().backend;
  std::mt19937_64 rng(7);
  const std::uint64_t n = std::uint64_t{65535} * 64 + 4097;
  const std::uint64_t n8 = std::uint64_t{65535} * 64 * 4 + 333;
  const auto one = [&](Combo c, std::uint64_t count, bool scalar_b) {
    const std::size_t w = dtype_info(c.dtype).size;
    const bool binary = op_info(c.op).arity == 2;
    std::vector<Bytes> in{random_tensor(rng, count, w, false)};
    std::vector<Shape> shapes{Shape({count})};
    if (binary) {
      in.push_back(random_tensor(rng, scalar_b ? 1 : count, w, c.op == OpKind::shl || c.op == OpKind::shr));
      shapes.push_back(scalar_b ? Shape({}) : Shape({count}));
    }
    expect_same(b, make_op(c, shapes), in, fmt::format("{} n={}{}", combo_name(c), count, scalar_b ? " scalar B" : ""));
  };
  one({OpKind::bit_xor, DType::uint32, DType::uint32, ShiftOverflow::zero}, n, false);
  one({OpKind::shl, DType::uint64, DType::uint64, ShiftOverflow::wrap}, n, false);
  one({OpKind::popcount, DType::uint16, DType::uint32, ShiftOverflow::zero}, n, false);
  one({OpKind::bit_and, DType::uint8, DType::uint8, ShiftOverflow::zero}, n8, true);
  one({OpKind::bit_and, DType::int32, DType::int32, ShiftOverflow::zero}, n, true);
}

#ifdef DMLBITS_HAVE_D3D12  // the runtime's piece size
// Transfers move in pieces through rotating heaps (d3d12_runtime.cpp): inputs and outputs of
// several pieces with tails, an input of one piece and an output of three, the reverse, and one
// input kept (broadcast) beside one cut in pieces.
TEST(D3d12BackendTest, TransfersInPiecesAcrossRotatingHeaps) {
  REQUIRE_GPU();
  D3d12Backend& b = *gpu().backend;
  std::mt19937_64 rng(17);
  const std::uint64_t piece = d3d12::kTransferPieceBytes;
  const auto one = [&](Combo c, std::uint64_t count, bool scalar_b) {
    const std::size_t w = dtype_info(c.dtype).size;
    std::vector<Bytes> in{random_tensor(rng, count, w, false)};
    std::vector<Shape> shapes{Shape({count})};
    if (op_info(c.op).arity == 2) {
      in.push_back(random_tensor(rng, scalar_b ? 1 : count, w, c.op == OpKind::shl || c.op == OpKind::shr));
      shapes.push_back(scalar_b ? Shape({}) : Shape({count}));
    }
    expect_same(b, make_op(c, shapes), in, fmt::format("{} n={}{}", combo_name(c), count, scalar_b ? " scalar B" : ""));
  };
  one({OpKind::bit_xor, DType::uint32, DType::uint32, ShiftOverflow::zero}, (2 * piece + 12) / 4, false);
  one({OpKind::shr, DType::uint16, DType::uint16, ShiftOverflow::zero}, piece + 1, false);  // 2 pieces and 2 bytes
  one({OpKind::popcount, DType::uint8, DType::uint32, ShiftOverflow::zero}, piece / 2 + 5, false);  // in 1, out 3
  one({OpKind::popcount, DType::uint64, DType::uint8, ShiftOverflow::zero}, piece / 4 + 3, false);  // in 3, out 1
  one({OpKind::bit_or, DType::uint8, DType::uint8, ShiftOverflow::zero}, 2 * piece + 7, true);
}
#endif

#ifdef DMLBITS_HAVE_D3D12  // the copy team is built with the backend
// A copy is split over the team from kSplitCopyMinBytes: parts that cover it exactly, cut on
// the alignment, at most one per thread and each at least half the line; a part's failure,
// on any thread, is thrown once all are done, and the team runs the next split.
TEST(D3d12CopyTeamTest, SplitsLargeCopiesOverItsThreads) {
  d3d12::CopyTeam team(2);  // on a one-CPU machine, the budget may give one
  struct Part {
    std::uint64_t at, n;
  };
  std::mutex m;
  std::vector<Part> parts;
  const auto record = [&](std::uint64_t at, std::uint64_t n) {
    std::lock_guard lock(m);
    parts.push_back({at, n});
  };
  team.split(d3d12::kSplitCopyMinBytes - 1, 4096, record);
  ASSERT_EQ(parts.size(), 1u);
  EXPECT_EQ(parts[0].n, d3d12::kSplitCopyMinBytes - 1);
  for (const std::uint64_t bytes : {d3d12::kSplitCopyMinBytes, std::uint64_t{3} << 22, (std::uint64_t{8} << 20) + 5}) {
    parts.clear();
    team.split(bytes, 4096, record);
    std::sort(parts.begin(), parts.end(), [](const Part& a, const Part& b) { return a.at < b.at; });
    EXPECT_EQ(parts.size(), team.threads()) << bytes;
    std::uint64_t next = 0;
    for (const Part& p : parts) {
      EXPECT_EQ(p.at, next);
      EXPECT_EQ(p.at % 4096, 0u);
      EXPECT_GE(p.n, d3d12::kSplitCopyMinBytes / 2 - 4096);
      next = p.at + p.n;
    }
    EXPECT_EQ(next, bytes);
  }
  for (std::uint64_t failing = 0; failing < team.threads(); ++failing) {
    std::atomic<int> ran{0};
    EXPECT_THROW(team.split(d3d12::kSplitCopyMinBytes, 1,
                            [&](std::uint64_t at, std::uint64_t) {
                              ++ran;
                              if ((at == 0) == (failing == 0)) throw Error(Errc::io, "test: copy failed");
                            }),
                 Error);
    EXPECT_EQ(ran.load(), static_cast<int>(team.threads()));
  }
}
#endif

// Pieces of 8 MiB (a hardware adapter's) with concurrent reads and writes allowed: each piece's
// reads and writes are split over the copy team (two threads where the machine has two CPUs),
// and the output is still the reference's, every element written once.
TEST(D3d12BackendTest, StagedPiecesSplitOverTheCopyTeam) {
  REQUIRE_GPU();
  D3d12BackendOptions o;
  o.stream_piece_bytes = d3d12::kTransferPieceBytes;
  o.stream_in_flight = 3;
  D3d12Backend b(o);
  std::mt19937_64 rng(29);
  const Combo or8{OpKind::bit_or, DType::uint8, DType::uint8, ShiftOverflow::zero};
  const std::uint64_t n = d3d12::kTransferPieceBytes + 4099;
  const std::vector<Bytes> in{random_tensor(rng, n, 1, false), random_tensor(rng, n, 1, false)};
  const ValidatedOp op = make_op(or8, {Shape({n}), Shape({n})});
  Bytes got(n), want(n);
  MemoryStagedIo io(op, in, got, true);
  ASSERT_TRUE(b.run_staged(op, io));
  io.expect_complete("or uint8, 8 MiB pieces");
  ExecuteBuffers rb{{{in[0].data(), n}, {in[1].data(), n}}, {want.data(), n}};
  CpuReferenceBackend().run(op, rb);
  EXPECT_TRUE(got == want) << "or uint8 in 8 MiB pieces split over the copy team differs from the reference";
}

// A streamed run stopped by a failed read or an interrupt between pieces, with pieces in flight,
// throws what stopped it, and the device runs the next operations correctly (streamed and in
// memory).
TEST(D3d12BackendTest, StagedRunsStopCleanly) {
  REQUIRE_GPU();
  std::mt19937_64 rng(23);
  const Combo x32{OpKind::bit_xor, DType::uint32, DType::uint32, ShiftOverflow::zero};
  const std::uint64_t n = 64 * 9 + 3;
  const std::vector<Bytes> in{random_tensor(rng, n, 4, false), random_tensor(rng, n, 4, false)};
  const ValidatedOp op = make_op(x32, {Shape({n}), Shape({n})});
  for (int stop = 0; stop < 2; ++stop) {
    Bytes out(n * 4);
    MemoryStagedIo io(op, in, out, false);
    if (stop == 0) io.fail_read_at = 9;  // the fifth piece's second input: three pieces in flight
    else io.fail_written_at = 2;
    try {
      staged_backend().run_staged(op, io);
      ADD_FAILURE() << "the run did not stop";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), stop == 0 ? Errc::io : Errc::interrupted);
    }
    expect_same_staged(op, in, false, "after a stopped run");
    expect_same(*gpu().backend, op, in, "in memory after a stopped run");
  }
}

// Buffers limited to 4 KiB: packed runs, boxes whose inputs are uploaded whole (addressed with
// base offsets) or box by box, a broadcast input larger than one buffer, and in place.
TEST(D3d12BackendTest, ChunksToTheBufferLimit) {
  REQUIRE_GPU();
  D3d12BackendOptions o;
  o.max_buffer_bytes = 4096;
  D3d12Backend b(o);
  std::mt19937_64 rng(11);
  const Combo and8{OpKind::bit_and, DType::uint8, DType::uint8, ShiftOverflow::zero};
  const Combo shr64{OpKind::shr, DType::uint64, DType::uint64, ShiftOverflow::zero};
  const Combo shl16{OpKind::shl, DType::uint16, DType::uint16, ShiftOverflow::wrap};
  const Combo pop64{OpKind::popcount, DType::uint64, DType::uint32, ShiftOverflow::zero};
  const auto run = [&](const Combo& c, const std::vector<Shape>& shapes, const std::string& what) {
    std::vector<Bytes> in;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      in.push_back(random_tensor(rng, shapes[i].element_count(), dtype_info(c.dtype).size,
                                 i == 1 && (c.op == OpKind::shl || c.op == OpKind::shr)));
    expect_same(b, make_op(c, shapes), in, combo_name(c) + " " + what);
  };
  run(and8, {Shape({10001}), Shape({10001})}, "packed, 3 chunks");
  run(shr64, {Shape({5003}), Shape({5003})}, "packed, 10 chunks");
  run(pop64, {Shape({2000})}, "unary packed");
  // Outputs wider than inputs: the input fits one buffer and is addressed with base offsets.
  run({OpKind::popcount, DType::uint8, DType::uint32, ShiftOverflow::zero}, {Shape({3001})}, "packed, whole input");
  run({OpKind::popcount, DType::int16, DType::uint32, ShiftOverflow::zero}, {Shape({1500})}, "packed, whole input");
  run(shr64, {Shape({3, 40, 50}), Shape({1, 1, 50})}, "boxes, A sliced, B whole");
  run(shr64, {Shape({3, 40, 50}), Shape({3, 1, 1})}, "boxes, B whole with base offsets");
  run(shl16, {Shape({1, 2600, 1}), Shape({3, 1, 2})}, "broadcast A larger than a buffer");
  run(shr64, {Shape({2, 3, 1100}), Shape({2, 1, 1100})}, "one row larger than a chunk");
  run(shl16, {Shape({2, 1, 2, 1, 2, 1, 2, 700}), Shape({1, 2, 1, 2, 1, 2, 1, 700})}, "8-d boxes");

  // In place: the output is A's memory, overwritten chunk by chunk.
  const Shape s({3, 40, 50});
  Bytes a = random_tensor(rng, s.element_count(), 8, false), bb = random_tensor(rng, 50, 8, true);
  const ValidatedOp op = make_op(shr64, {s, Shape({50})}, true);
  Bytes want(a.size());
  CpuReferenceBackend().run(op,
                            ExecuteBuffers{{{a.data(), a.size()}, {bb.data(), bb.size()}}, {want.data(), want.size()}});
  b.run(op, ExecuteBuffers{{{a.data(), a.size()}, {bb.data(), bb.size()}}, {a.data(), a.size()}});
  EXPECT_TRUE(a == want) << "in place with chunks";
}

TEST(D3d12BackendTest, ReportsDeviceAndPhases) {
  REQUIRE_GPU();
  const D3d12DeviceInfo& i = gpu().backend->device_info();
  EXPECT_FALSE(i.adapter.name.empty());
  EXPECT_NE(i.feature_level, "unknown");
  EXPECT_NE(i.shader_model, "unknown");
  EXPECT_GT(i.timestamp_frequency, 0u);
  EXPECT_NE(device_text(gpu().backend->device_description()).find(i.adapter.name), std::string::npos);
  std::vector<std::string> names;
  for (const auto& p : gpu().backend->detail_phases()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"device", "pipeline", "upload", "dispatch", "readback", "submit"}));
}

TEST(D3d12BackendTest, AdapterSelection) {
  REQUIRE_GPU();
  const auto& adapters = gpu_adapters().adapters;
  ASSERT_FALSE(adapters.empty());
  const GpuAdapter& first = adapters.front();
  EXPECT_EQ(find_adapter(adapters, std::to_string(first.index)).name, first.name);
  // A case-insensitive part of the name.
  std::string upper = first.name.substr(0, 4);
  for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  if (adapters.size() == 1) {
    EXPECT_EQ(find_adapter(adapters, upper).index, first.index);
  }
  const auto code = [&](std::string spec) {
    try {
      (void)find_adapter(adapters, spec);
    } catch (const Error& e) {
      return e.code();
    }
    return Errc::internal;
  };
  EXPECT_EQ(code("999"), Errc::usage);
  EXPECT_EQ(code("no such adapter name"), Errc::usage);
  EXPECT_NE(default_adapter(adapters), nullptr);
  // The named adapter is the one the device runs on.
  D3d12Backend named(D3d12BackendOptions{std::to_string(first.index)});
  EXPECT_EQ(named.device_info().adapter.index, first.index);
}

TEST(D3d12BackendTest, AutoKeepsSmallRunsOnTheCpu) {
  // No adapter needed: a small output never looks for one.
  auto small = make_backend(test::backend_request("auto"), test::operands_of_bytes(1024));
  EXPECT_EQ(small->name(), "cpu");
  EXPECT_NE(selection_text(small->selection()).find("auto chose cpu: the output (1 KiB) is below 16 MiB"),
            std::string::npos)
      << selection_text(small->selection());
  auto large = make_backend(test::backend_request("auto"), test::operands_of_bytes(kAutoGpuMinBytes));
  const bool hardware = [] {
    for (const auto& a : gpu_adapters().adapters)
      if (!a.software) return true;
    return false;
  }();
  // On a hardware adapter too: its estimated cost (auto_rule.hpp) is above the CPU's.
  EXPECT_EQ(large->name(), "cpu") << selection_text(large->selection());
  EXPECT_NE(selection_text(large->selection()).find(hardware ? "auto chose cpu: adapter " : "auto chose cpu"),
            std::string::npos)
      << selection_text(large->selection());
  if (hardware) {
    EXPECT_NE(selection_text(large->selection()).find("estimated"), std::string::npos)
        << selection_text(large->selection());
  }
  EXPECT_TRUE(selection_text(make_backend(test::backend_request("cpu"))->selection()).empty());
}

TEST(D3d12BackendTest, OptionErrors) {
  const auto code = [](std::string name, std::string isa, std::string adapter) {
    try {
      check_backend_choice(test::kind(name), isa, adapter, std::nullopt);
    } catch (const Error& e) {
      return e.code();
    }
    return Errc::internal;
  };
  EXPECT_EQ(code("d3d12", "avx2", ""), Errc::usage);
  EXPECT_EQ(code("cpu", "", "0"), Errc::usage);
  EXPECT_EQ(code("auto", "avx2", "0"), Errc::internal);  // accepted
  EXPECT_EQ(code("d3d12", "", "0"), Errc::internal);     // accepted
}

#ifdef DMLBITS_HAVE_D3D12  // adapters.cpp is part of a built backend only
// Software rasterisers that the APIs do not flag (wine's DXGI passes lavapipe on as a plain
// adapter) are known by vendor or name; hardware names are not mistaken for them.
TEST(D3d12BackendTest, KnowsSoftwareRasterisersByVendorOrName) {
  using d3d12_detail::known_software_rasteriser;
  EXPECT_TRUE(known_software_rasteriser(0x10005, 0, "llvmpipe (LLVM 15.0.6, 256 bits)"));
  EXPECT_TRUE(known_software_rasteriser(0x1414, 0x8c, "Microsoft Basic Render Driver"));
  EXPECT_TRUE(known_software_rasteriser(0x1AE0, 0xC0DE, "SwiftShader Device (Subzero)"));
  EXPECT_TRUE(known_software_rasteriser(0, 0, "LLVMPIPE"));
  EXPECT_FALSE(known_software_rasteriser(0x10DE, 0x2684, "NVIDIA GeForce RTX 4090"));
  EXPECT_FALSE(known_software_rasteriser(0x8086, 0x56a0, "Intel(R) Arc(TM) A770 Graphics"));
  EXPECT_FALSE(known_software_rasteriser(0x1414, 0x8d, "Microsoft Hyper-V Video"));
}
#endif

// What DirectML builds on (d3d12_device.hpp): the d3d12 backend's own device on the adapter
// --adapter names, with its queue, and the same errors for a wrong adapter.
TEST(D3d12BackendTest, SharesItsDeviceOnTheChosenAdapter) {
  REQUIRE_GPU();
  const d3d12::SharedDevice shared = d3d12::shared_device("");
  ASSERT_NE(shared.adapter, nullptr);
  EXPECT_EQ(shared.adapter->index, gpu().backend->device_info().adapter.index);
  EXPECT_NE(shared.device, nullptr);
  EXPECT_NE(shared.queue, nullptr);
  EXPECT_NE(shared.mutex, nullptr);
  const GpuAdapter& first = gpu_adapters().adapters.front();
  const d3d12::SharedDevice named = d3d12::shared_device(std::to_string(first.index));
  EXPECT_EQ(named.adapter->index, first.index);
  if (first.index == shared.adapter->index) {
    EXPECT_EQ(named.device, shared.device);  // one device per adapter
  }
  try {
    (void)d3d12::shared_device("999");
    ADD_FAILURE() << "adapter 999 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage) << e.what();
  }
}

#ifdef DMLBITS_HAVE_D3D12
TEST(D3d12RuntimeTest, HresultText) {
  EXPECT_EQ(d3d12::hresult_text(static_cast<std::int32_t>(0x80070057u)), "0x80070057 (E_INVALIDARG)");
  EXPECT_EQ(d3d12::hresult_text(static_cast<std::int32_t>(0x887A0005u)), "0x887A0005 (DXGI_ERROR_DEVICE_REMOVED)");
  EXPECT_EQ(d3d12::hresult_text(static_cast<std::int32_t>(0x80001234u)), "0x80001234");
}

// Every kernel the support table can need becomes a pipeline on the device (vkd3d translates
// it to SPIR-V and the driver compiles it), and broken bytecode is refused with the call and
// HRESULT named.
TEST(D3d12RuntimeTest, EveryKernelCreatesAPipelineAndBadBytecodeFails) {
  REQUIRE_GPU();
  auto device = d3d12::Device::acquire(gpu().backend->device_info().adapter, nullptr);
  std::lock_guard lock(device->mutex());
  for (const gpu::KernelKey& key : gpu::all_kernel_keys()) {
    try {
      device->create_pipeline(gpu::build_kernel(key), gpu::to_string(key));
    } catch (const Error& e) {
      ADD_FAILURE() << gpu::to_string(key) << ": " << e.what();
    }
  }
  std::vector<std::uint8_t> bad = gpu::build_kernel(gpu::all_kernel_keys().front());
  bad[bad.size() / 2] ^= 0x5a;  // the container's checksum no longer matches
  try {
    device->create_pipeline(bad, "corrupted");
    ADD_FAILURE() << "corrupted bytecode was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend);
    EXPECT_EQ(std::string(e.what()), "CreateComputePipelineState failed: 0x80070057 (E_INVALIDARG) (corrupted)");
  }
}
#endif

TEST(D3d12BackendTest, OutputSizeHint) {
  EXPECT_EQ(output_size_hint({{DType::uint16, Shape({3, 1})}, {DType::uint16, Shape({4})}}), 24u);
  EXPECT_EQ(output_size_hint({{DType::uint64, Shape({})}}), 8u);
  EXPECT_EQ(output_size_hint({{DType::uint8, Shape({3})}, {DType::uint8, Shape({4})}}), 0u);  // no broadcast
}

}  // namespace
}  // namespace dmlbits
