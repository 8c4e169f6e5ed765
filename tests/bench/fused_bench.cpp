// The fused CPU executor (fused.hpp) against issue #46's targets, on 256 MiB uint32 operands
// (64 Mi elements), on 1 and 2 threads: popcount(a ^ b) into uint8, a & ~b and (a >> 3) & 0xff,
// each fused, as one xor of the same inputs (a single dmlbits operation: CpuBackend), and as the
// unfused chain (the same operations as single CpuBackend runs over the whole arrays, through
// full-size temporaries). The three run in turns within each iteration (the order rotated each
// iteration), so that their ratios are taken at the same moments, which the load of a shared
// machine moves far less than separate benchmarks; each figure is the median over the
// iterations. Counters: GB/s of each (bytes moved: the inputs read and the output written, the
// temporaries not counted, so that the three compare as rates of the same work), "fused_x_xor"
// (fused time over one xor's: the target is at most 1.0 for popcount(a ^ b), 1.1 for the
// others) and "chain_x_fused" (the chain's time over the fused one's: at least 1.3).
// The "tiles" benchmarks time the fused expressions on the tiles alone (the register path off)
// at 1, 8 and 32 KiB per tile buffer (of the widest value), and on the register path
// ("registers"), in turns the same way, at 256 MiB and 256 KiB per operand.
//
//   build/tests/bench/dmlbits_fused_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <algorithm>
#include <time.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cpu_backend.hpp"
#include "fused.hpp"
#include "dmlbits/tensor.hpp"
#include "validate.hpp"

namespace dmlbits {
namespace {

constexpr std::uint64_t kElems = std::uint64_t{64} << 20;  // 256 MiB of uint32
constexpr std::size_t kBytes = kElems * 4;

struct Buffers {
  AlignedBuffer a{kBytes}, b{kBytes}, out{kBytes}, tmp{kBytes};
};

// Filled once (and every page touched), so that page faults are not timed.
Buffers& buffers() {
  static const std::unique_ptr<Buffers> buf = [] {
    auto p = std::make_unique<Buffers>();
    std::mt19937_64 rng(1);
    for (std::size_t i = 0; i < kBytes; i += 8) {
      const std::uint64_t v = rng(), w = rng();
      std::memcpy(p->a.data() + i, &v, 8);
      std::memcpy(p->b.data() + i, &w, 8);
    }
    std::memset(p->out.data(), 0, kBytes);
    std::memset(p->tmp.data(), 0, kBytes);
    return p;
  }();
  return *buf;
}

using Kind = FusedValue::Kind;

enum class Expr { popcount_xor, and_not, shr_and };

const char* expr_name(Expr e) {
  switch (e) {
    case Expr::popcount_xor:
      return "popcount(a^b)";
    case Expr::and_not:
      return "a&~b";
    case Expr::shr_and:
      break;
  }
  return "(a>>3)&0xff";
}

FusedProgram program(Expr e) {
  FusedProgram p;
  p.input_widths = {4, 4};
  p.input_is_scalar = {false, false};
  switch (e) {
    case Expr::popcount_xor:
      p.nodes = {{OpKind::bit_xor, 4, 4, {Kind::input, 0, 0}, {Kind::input, 1, 0}},
                 {OpKind::popcount, 4, 1, {Kind::node, 0, 0}, {}}};
      break;
    case Expr::and_not:
      p.nodes = {{OpKind::bit_not, 4, 4, {Kind::input, 1, 0}, {}},
                 {OpKind::bit_and, 4, 4, {Kind::input, 0, 0}, {Kind::node, 0, 0}}};
      break;
    case Expr::shr_and:
      p.input_widths = {4};
      p.input_is_scalar = {false};
      p.nodes = {{OpKind::shr, 4, 4, {Kind::input, 0, 0}, {Kind::constant, 0, 3}},
                 {OpKind::bit_and, 4, 4, {Kind::node, 0, 0}, {Kind::constant, 0, 0xff}}};
      break;
  }
  return p;
}

// Bytes read and written by an expression over n elements.
std::size_t moved_bytes(Expr e, std::uint64_t n) {
  switch (e) {
    case Expr::popcount_xor:
      return 9 * n;
    case Expr::and_not:
      return 12 * n;
    case Expr::shr_and:
      break;
  }
  return 8 * n;
}

// One single dmlbits operation on uint32 runs of n elements (B a one-element scalar if `scalar_b`).
struct SingleOp {
  ValidatedOp op;
  std::uint64_t n;
  SingleOp(std::uint64_t count, OpKind kind, bool scalar_b, std::optional<DType> out = std::nullopt)
      : op(validate([&] {
          OpRequest r;
          r.op = kind;
          r.inputs.push_back({DType::uint32, Shape{count}});
          if (op_info(kind).arity == 2) r.inputs.push_back({DType::uint32, scalar_b ? Shape{1} : Shape{count}});
          r.out_dtype = out;
          return r;
        }())),
        n(count) {}
  void run(CpuBackend& backend, const std::byte* a, const std::byte* b, std::byte* out) const {
    ExecuteBuffers eb;
    eb.inputs.push_back({const_cast<std::byte*>(a), n * 4});
    if (op.op().arity == 2)
      eb.inputs.push_back({const_cast<std::byte*>(b), op.input_shapes()[1] == Shape{1} ? 4 : n * 4});
    eb.output = {out, n * dtype_info(op.output_dtype()).size};
    backend.run(op, eb);
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

struct Medians {
  std::vector<double> wall, cpu;  // seconds per run of each variant: elapsed, and this process's CPU time
};

// Runs each of `variants` `reps` times per iteration, in turns rotated each iteration; returns
// each one's median seconds per run, elapsed and in CPU time (the CPU time of all this process's
// threads: it leaves out the time other processes held the CPUs, which on a shared machine is
// most of the noise). The benchmark's own time is variant 0's.
Medians interleave(benchmark::State& state, const std::vector<std::function<void()>>& variants, int reps = 1) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> wall(variants.size()), cpu(variants.size());
  std::size_t turn = 0;
  for (auto _ : state) {
    double first = 0;
    for (std::size_t j = 0; j < variants.size(); ++j) {
      const std::size_t i = (j + turn) % variants.size();
      const double c0 = process_cpu_seconds();
      const auto t0 = Clock::now();
      for (int r = 0; r < reps; ++r) {
        variants[i]();
        benchmark::ClobberMemory();
      }
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      cpu[i].push_back((process_cpu_seconds() - c0) / reps);
      wall[i].push_back(s / reps);
      if (i == 0) first = s;
    }
    ++turn;
    state.SetIterationTime(first);
  }
  Medians m;
  for (std::size_t i = 0; i < variants.size(); ++i) {
    m.wall.push_back(median(wall[i]));
    m.cpu.push_back(median(cpu[i]));
  }
  return m;
}

void bench_targets(benchmark::State& state, Expr e, unsigned threads, std::uint64_t n) {
  Buffers& buf = buffers();
  const FusedRunner fused(program(e), best_isa(), true);
  CpuBackend backend(std::nullopt, {.threads = threads});  // as the program: the per-operation choice
  const SingleOp xor_op(n, OpKind::bit_xor, false);
  // As the backend would split a single operation of this size (one thread under 4 MiB).
  const unsigned fused_threads = backend.thread_count(n * 4).threads;
  const std::uint32_t three = 3, ff = 0xff;
  const auto* three_p = reinterpret_cast<const std::byte*>(&three);
  const auto* ff_p = reinterpret_cast<const std::byte*>(&ff);
  const std::vector<const void*> inputs{buf.a.data(), buf.b.data()};
  const std::span<const void* const> used(inputs.data(), e == Expr::shr_and ? 1 : 2);

  std::function<void()> chain;
  std::vector<SingleOp> ops;
  switch (e) {
    case Expr::popcount_xor:
      ops = {SingleOp(n, OpKind::bit_xor, false), SingleOp(n, OpKind::popcount, false, DType::uint8)};
      chain = [&] {
        ops[0].run(backend, buf.a.data(), buf.b.data(), buf.tmp.data());
        ops[1].run(backend, buf.tmp.data(), nullptr, buf.out.data());
      };
      break;
    case Expr::and_not:
      ops = {SingleOp(n, OpKind::bit_not, false), SingleOp(n, OpKind::bit_and, false)};
      chain = [&] {
        ops[0].run(backend, buf.b.data(), nullptr, buf.tmp.data());
        ops[1].run(backend, buf.a.data(), buf.tmp.data(), buf.out.data());
      };
      break;
    case Expr::shr_and:
      ops = {SingleOp(n, OpKind::shr, true), SingleOp(n, OpKind::bit_and, true)};
      chain = [&] {
        ops[0].run(backend, buf.a.data(), three_p, buf.tmp.data());
        ops[1].run(backend, buf.tmp.data(), ff_p, buf.out.data());
      };
      break;
  }
  const Medians m = interleave(state,
                               {[&] { fused.run(n, used, buf.out.data(), fused_threads); },
                                [&] { xor_op.run(backend, buf.a.data(), buf.b.data(), buf.out.data()); }, chain},
                               n * 4 >= (std::size_t{8} << 20) ? 1 : 64);
  const std::vector<double>& s = m.wall;
  const double moved = static_cast<double>(moved_bytes(e, n));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * moved_bytes(e, n)));
  state.counters["fused_GBps"] = moved / s[0] / 1e9;
  state.counters["xor_GBps"] = 12.0 * static_cast<double>(n) / s[1] / 1e9;
  state.counters["chain_GBps"] = moved / s[2] / 1e9;
  state.counters["fused_x_xor"] = s[0] / s[1];
  state.counters["chain_x_fused"] = s[2] / s[0];
  state.counters["cpu_fused_x_xor"] = m.cpu[0] / m.cpu[1];
  state.counters["cpu_chain_x_fused"] = m.cpu[2] / m.cpu[0];
  state.SetLabel(device_text(backend.device_description()));
}

// The tiles alone at 1, 8 and 32 KiB (per buffer of the widest value), and the register path
// (at any size: in the caches too, where the default bound would give the tiles).
void bench_tiles(benchmark::State& state, Expr e, unsigned threads, std::uint64_t n) {
  Buffers& buf = buffers();
  const std::vector<const void*> inputs{buf.a.data(), buf.b.data()};
  const std::span<const void* const> used(inputs.data(), e == Expr::shr_and ? 1 : 2);
  std::vector<std::string> names;
  std::vector<std::unique_ptr<FusedRunner>> runners;
  const auto add = [&](bool register_path, std::size_t tile) {
    runners.push_back(std::make_unique<FusedRunner>(
        program(e), best_isa(), true,
        FusedOptions{.tile_bytes = tile, .register_path = register_path, .register_min_bytes = 0}));
    names.push_back(register_path ? std::string("registers") : "tiles_" + std::to_string(tile >> 10) + "KiB");
  };
  for (const std::size_t kib : {1, 8, 32}) add(false, kib << 10);
  add(true, kFusedTileBytes);
  std::vector<std::function<void()>> variants;
  for (const auto& r : runners) variants.push_back([&, p = r.get()] { p->run(n, used, buf.out.data(), threads); });
  const Medians m = interleave(state, variants, n * 4 >= (std::size_t{8} << 20) ? 1 : 64);
  const std::vector<double>& s = m.wall;
  const double moved = static_cast<double>(moved_bytes(e, n));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * moved_bytes(e, n)));
  for (std::size_t i = 0; i < s.size(); ++i) {
    state.counters[names[i]] = moved / s[i] / 1e9;
    state.counters["cpu_" + names[i]] = moved / m.cpu[i] / 1e9;
  }
}

void register_all() {
  for (const std::uint64_t n : {kElems, std::uint64_t{64} << 10})
    for (const Expr e : {Expr::popcount_xor, Expr::and_not, Expr::shr_and})
      for (const unsigned threads : {1u, 2u})
        benchmark::RegisterBenchmark(("targets/" + std::string(expr_name(e)) + "/" +
                                      (n == kElems ? "256MiB" : "256KiB") + "/threads:" + std::to_string(threads))
                                         .c_str(),
                                     bench_targets, e, threads, n)
            ->UseManualTime()
            ->Iterations(9);
  for (const std::uint64_t n : {kElems, std::uint64_t{64} << 10})
    for (const Expr e : {Expr::popcount_xor, Expr::and_not, Expr::shr_and})
      for (const unsigned threads : {1u, 2u})
        benchmark::RegisterBenchmark(("tiles/" + std::string(expr_name(e)) + "/" + (n == kElems ? "256MiB" : "256KiB") +
                                      "/threads:" + std::to_string(threads))
                                         .c_str(),
                                     bench_tiles, e, threads, n)
            ->UseManualTime()
            ->Iterations(5);
}

}  // namespace
}  // namespace dmlbits

int main(int argc, char** argv) {
  dmlbits::register_all();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
