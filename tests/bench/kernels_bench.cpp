// Throughput of every CPU kernel this machine can run (each operation, width, operand layout
// and instruction set), at an L2-resident size (256 KiB per input) and a memory-bound one
// (256 MiB per input), with memcpy of the same input size as the baseline; plus the whole "cpu"
// backend on one and two threads. Bytes processed count every byte read and written (A, B
// unless broadcast, and the output), so GB/s compares with memcpy's read + write.
// A second baseline, memread, only reads: kernels that read much more than they write (the
// narrowing popcounts read 2-8 bytes per byte written) are bounded by how fast one thread can
// read, not by memcpy. Each kernel's "read" counter (input bytes per second) compares with it.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cpu_backend.hpp"
#include "stream_policy.hpp"
#include "dmlbits/tensor.hpp"
#include "validate.hpp"

namespace dmlbits {
namespace {

constexpr std::size_t kSmall = std::size_t{256} << 10;
constexpr std::size_t kLarge = std::size_t{256} << 20;

std::string size_name(std::size_t bytes) {
  return bytes >= (std::size_t{1} << 20) ? std::to_string(bytes >> 20) + "MiB" : std::to_string(bytes >> 10) + "KiB";
}

// A and B of `bytes` each (B's bytes are small, so they work as shift counts at every width),
// and an output large enough for popcount of bytes into uint32. Filled once, so that page
// faults are not timed.
struct Buffers {
  AlignedBuffer a, b, out;
};

Buffers& buffers(std::size_t bytes) {
  static std::map<std::size_t, std::unique_ptr<Buffers>> cache;
  auto& slot = cache[bytes];
  if (!slot) {
    slot = std::make_unique<Buffers>(Buffers{AlignedBuffer(bytes), AlignedBuffer(bytes), AlignedBuffer(4 * bytes)});
    std::mt19937_64 rng(1);
    for (std::size_t i = 0; i < bytes; i += 8) {
      const std::uint64_t v = rng();
      std::memcpy(slot->a.data() + i, &v, 8);
      const std::uint64_t counts = v & 0x0707070707070707u;
      std::memcpy(slot->b.data() + i, &counts, 8);
    }
    std::memset(slot->out.data(), 0, 4 * bytes);
  }
  return *slot;
}

std::size_t out_width(const KernelInfo& k) { return k.out_width; }

// Each iteration also copies A with memcpy just before the kernel, and the "x_memcpy" counter
// is the kernel's GB/s over that memcpy's (read + write): a ratio to a baseline measured at the
// same moment, which the load of a shared machine moves far less than either figure (the
// separate memcpy benchmark runs once, up to a minute before some kernels). Only the kernel is
// timed (manual time).
void bench_kernel(benchmark::State& state, const KernelInfo* k, std::size_t bytes, std::optional<CpuVendor> maker) {
  using Clock = std::chrono::steady_clock;
  Buffers& buf = buffers(bytes);
  const std::size_t n = bytes / k->width;
  KernelParams params{};
  params.vendor = maker;
  double kernel_s = 0, memcpy_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    std::memcpy(buf.out.data(), buf.a.data(), bytes);
    benchmark::ClobberMemory();
    const auto t1 = Clock::now();
    k->fn(n, buf.a.data(), buf.b.data(), buf.out.data(), params);
    benchmark::ClobberMemory();
    const auto t2 = Clock::now();
    const double s = std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(s);
    kernel_s += s;
    memcpy_s += std::chrono::duration<double>(t1 - t0).count();
  }
  std::size_t moved = n * out_width(*k);
  if (k->operands != Operands::a_scalar) moved += n * k->width;
  if (op_info(k->op).arity == 2 && k->operands != Operands::b_scalar) moved += n * k->width;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * moved));
  const std::size_t read = moved - n * out_width(*k);
  state.counters["read"] = benchmark::Counter(static_cast<double>(state.iterations() * read),
                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  if (kernel_s > 0 && memcpy_s > 0)
    state.counters["x_memcpy"] =
        (static_cast<double>(moved) / kernel_s) / (2.0 * static_cast<double>(bytes) / memcpy_s);
}

// Every runnable kernel of one (operation, width, output width), A and B both runs, in turns
// within each iteration (the order rotated each iteration) after a memcpy of the input: the
// per-operation choice (kernel_choices) is measured by ratios taken at the same moment, which
// a shared machine's load moves far less than separate benchmarks. Each figure is the median
// over the iterations (a run that another process preempted does not count), and in the caches
// each turn runs the kernel 16 times, so that the clock's cost does not count. Counters:
// "x_<tag>", each kernel's speed over the memcpy's (bytes read + written); "dispatch_x_best",
// the kernel dispatch picks without an override, its speed over the fastest kernel's (1 when it
// is the fastest). The benchmark's time is the dispatched kernel's.
void bench_choice(benchmark::State& state, std::vector<const KernelInfo*> kernels, const KernelInfo* dispatched,
                  std::size_t bytes) {
  using Clock = std::chrono::steady_clock;
  Buffers& buf = buffers(bytes);
  const KernelInfo& k0 = *kernels.front();
  const std::size_t n = bytes / k0.width;
  const KernelParams params{};
  const int reps = bytes < (std::size_t{8} << 20) ? 16 : 1;
  std::vector<std::vector<double>> seconds(kernels.size());
  std::vector<double> memcpy_s;
  std::size_t turn = 0;
  const auto seconds_since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) {
      std::memcpy(buf.out.data(), buf.a.data(), bytes);
      benchmark::ClobberMemory();
    }
    memcpy_s.push_back(seconds_since(t0) / reps);
    double iteration_dispatched = 0;
    for (std::size_t j = 0; j < kernels.size(); ++j) {
      const std::size_t i = (j + turn) % kernels.size();
      const auto t1 = Clock::now();
      for (int r = 0; r < reps; ++r) {
        kernels[i]->fn(n, buf.a.data(), buf.b.data(), buf.out.data(), params);
        benchmark::ClobberMemory();
      }
      const double s = seconds_since(t1) / reps;
      seconds[i].push_back(s);
      if (kernels[i] == dispatched) iteration_dispatched = s;
    }
    ++turn;
    state.SetIterationTime(iteration_dispatched * reps);  // all its runs this iteration
  }
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  std::size_t moved = n * k0.out_width + n * k0.width;
  if (op_info(k0.op).arity == 2) moved += n * k0.width;
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * moved));
  const double memcpy_rate = 2.0 * static_cast<double>(bytes) / median(memcpy_s);
  double best_s = 0, dispatched_s = 0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const double s = median(seconds[i]);
    const std::string tag = kernels[i]->tag;
    state.counters["x_" + tag] = (static_cast<double>(moved) / s) / memcpy_rate;
    if (i == 0 || s < best_s) best_s = s;
    if (kernels[i] == dispatched) dispatched_s = s;
  }
  state.counters["dispatch_x_best"] = best_s / dispatched_s;
  state.SetLabel(kernel_name(*dispatched));
}

void bench_memcpy(benchmark::State& state, std::size_t bytes) {
  Buffers& buf = buffers(bytes);
  for (auto _ : state) {
    std::memcpy(buf.out.data(), buf.a.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * 2 * bytes));
}

// Reads `bytes` and nothing else: 128 bytes per iteration into four independent accumulators,
// so that the loop is bound by loads, not by a dependency chain. AVX2 where the CPU has it
// (faster here than SSE2's 16-byte loads: 15 against 12 GB/s at best), else SSE2.
// Both return a 64-bit summary: a __m256i returned to code built without AVX changes the ABI.
__attribute__((target("avx2"))) std::uint64_t read_avx2(const std::byte* data, std::size_t bytes) {
  const auto* p = reinterpret_cast<const __m256i*>(data);
  __m256i x0 = _mm256_setzero_si256(), x1 = x0, x2 = x0, x3 = x0;
  for (std::size_t i = 0; i < bytes / 32; i += 4) {
    x0 = _mm256_or_si256(x0, _mm256_load_si256(p + i));
    x1 = _mm256_or_si256(x1, _mm256_load_si256(p + i + 1));
    x2 = _mm256_or_si256(x2, _mm256_load_si256(p + i + 2));
    x3 = _mm256_or_si256(x3, _mm256_load_si256(p + i + 3));
  }
  const __m256i all = _mm256_or_si256(_mm256_or_si256(x0, x1), _mm256_or_si256(x2, x3));
  return static_cast<std::uint64_t>(_mm256_extract_epi64(all, 0) | _mm256_extract_epi64(all, 3));
}
// The same, reading the buffer as four contiguous parts side by side, each prefetched 512 B ahead,
// as the AVX-512 narrowing popcounts read (UnaryRead::parts, stream_policy.hpp): one thread reads
// faster from several distant streams than from one, so this is the tighter bound for kernels
// that read far more than they write. A tail of less than four 64-byte lines is not read.
__attribute__((target("avx2"))) std::uint64_t read_avx2_streams(const std::byte* data, std::size_t bytes) {
  constexpr std::size_t kParts = 4;
  const std::size_t part = bytes / kParts / 64 * 64;
  __m256i x[kParts];
  for (auto& v : x) v = _mm256_setzero_si256();
  for (std::size_t i = 0; i < part; i += 64)
    for (std::size_t k = 0; k < kParts; ++k) {
      const std::byte* p = data + k * part + i;
      __builtin_prefetch(p + 512, 0, 3);
      const auto* v = reinterpret_cast<const __m256i*>(p);
      x[k] = _mm256_or_si256(x[k], _mm256_or_si256(_mm256_load_si256(v), _mm256_load_si256(v + 1)));
    }
  __m256i all = x[0];
  for (std::size_t k = 1; k < kParts; ++k) all = _mm256_or_si256(all, x[k]);
  return static_cast<std::uint64_t>(_mm256_extract_epi64(all, 0) | _mm256_extract_epi64(all, 3));
}
std::uint64_t read_sse2(const std::byte* data, std::size_t bytes) {
  const auto* p = reinterpret_cast<const __m128i*>(data);
  __m128i x0 = _mm_setzero_si128(), x1 = x0, x2 = x0, x3 = x0;
  for (std::size_t i = 0; i < bytes / 16; i += 8) {
    x0 = _mm_or_si128(_mm_or_si128(x0, _mm_load_si128(p + i)), _mm_load_si128(p + i + 4));
    x1 = _mm_or_si128(_mm_or_si128(x1, _mm_load_si128(p + i + 1)), _mm_load_si128(p + i + 5));
    x2 = _mm_or_si128(_mm_or_si128(x2, _mm_load_si128(p + i + 2)), _mm_load_si128(p + i + 6));
    x3 = _mm_or_si128(_mm_or_si128(x3, _mm_load_si128(p + i + 3)), _mm_load_si128(p + i + 7));
  }
  const __m128i all = _mm_or_si128(_mm_or_si128(x0, x1), _mm_or_si128(x2, x3));
  return static_cast<std::uint64_t>(_mm_cvtsi128_si64(_mm_or_si128(all, _mm_unpackhi_epi64(all, all))));
}

// One thread reading `bytes` through `read` (read_avx2, read_sse2 or read_avx2_streams).
using ReadFn = std::uint64_t (*)(const std::byte*, std::size_t);
void bench_memread(benchmark::State& state, std::size_t bytes, ReadFn read, const char* label) {
  Buffers& buf = buffers(bytes);
  for (auto _ : state) {
    const std::uint64_t all = read(buf.a.data(), bytes);
    benchmark::DoNotOptimize(all);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * bytes));
  state.counters["read"] = benchmark::Counter(static_cast<double>(state.iterations() * bytes),
                                              benchmark::Counter::kIsRate, benchmark::Counter::kIs1024);
  state.SetLabel(label);
}

// The backend on a packed uint32 tensor, with the given thread count (the kernel plus the
// descriptor walk and the threads' start-up).
void bench_backend(benchmark::State& state, OpKind op, unsigned threads, std::size_t bytes) {
  Buffers& buf = buffers(bytes);
  const std::uint64_t n = bytes / 4;
  OpRequest r;
  r.op = op;
  r.inputs.push_back({DType::uint32, Shape{n}});
  if (op_info(op).arity == 2) r.inputs.push_back({DType::uint32, Shape{n}});
  const ValidatedOp v = validate(r);
  ExecuteBuffers eb;
  eb.inputs.push_back({buf.a.data(), bytes});
  if (op_info(op).arity == 2) eb.inputs.push_back({buf.b.data(), bytes});
  const std::size_t out_bytes = n * dtype_info(v.output_dtype()).size;
  eb.output = {buf.out.data(), out_bytes};
  CpuBackend backend(std::nullopt, {.threads = threads});  // as the program: the per-operation choice
  for (auto _ : state) {
    backend.run(v, eb);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * (bytes * eb.inputs.size() + out_bytes)));
  state.SetLabel(device_text(backend.device_description()));
}

// For scripts/bench-peers: the backend as the program runs it (the per-operation kernel choice),
// on uint32 tensors of `n` elements, against a copy of input A in the same iteration (memcpy,
// one thread), as each peer's figure is against its own copy. Shift counts are 0..31, as the
// peers' (whose shifts by 32 or more differ); popcount writes uint32 counts, as theirs. A 4x4
// tensor is run many times per timing, so that the clock's cost does not count.
void bench_peer(benchmark::State& state, OpKind op, unsigned threads, std::size_t n) {
  using Clock = std::chrono::steady_clock;
  const std::size_t bytes = n * 4;
  static std::map<std::size_t, std::unique_ptr<Buffers>> counts_cache;
  Buffers& buf = buffers(std::max<std::size_t>(bytes, 64));
  auto& counts = counts_cache[bytes];
  if (!counts) {
    counts = std::make_unique<Buffers>(Buffers{AlignedBuffer(bytes), AlignedBuffer(0), AlignedBuffer(0)});
    std::mt19937 rng(2);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t c = rng() & 31;
      std::memcpy(counts->a.data() + 4 * i, &c, 4);
    }
  }
  OpRequest r;
  r.op = op;
  r.inputs.push_back({DType::uint32, Shape{n}});
  if (op_info(op).arity == 2) r.inputs.push_back({DType::uint32, Shape{n}});
  if (op == OpKind::popcount) r.out_dtype = DType::uint32;
  const ValidatedOp v = validate(r);
  ExecuteBuffers eb;
  eb.inputs.push_back({buf.a.data(), bytes});
  if (op_info(op).arity == 2) eb.inputs.push_back({op_info(op).shift ? counts->a.data() : buf.b.data(), bytes});
  eb.output = {buf.out.data(), bytes};
  CpuBackend backend(std::nullopt, {.threads = threads});
  const int reps = bytes < 4096 ? 10000 : 1;
  double copy_s = 0, op_s = 0;
  for (auto _ : state) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      std::memcpy(buf.out.data(), buf.a.data(), bytes);
      benchmark::ClobberMemory();
    }
    const auto t1 = Clock::now();
    for (int i = 0; i < reps; ++i) {
      backend.run(v, eb);
      benchmark::ClobberMemory();
    }
    const auto t2 = Clock::now();
    copy_s += std::chrono::duration<double>(t1 - t0).count();
    const double s = std::chrono::duration<double>(t2 - t1).count();
    op_s += s;
    state.SetIterationTime(s);
  }
  state.counters["x_copy"] = copy_s / op_s;
  state.counters["seconds_per_run"] = op_s / (static_cast<double>(state.iterations()) * reps);
  state.counters["out_GBps"] = static_cast<double>(bytes) * static_cast<double>(state.iterations()) * reps / op_s / 1e9;
  state.SetLabel(device_text(backend.device_description()));
}

void register_all() {
  for (const std::size_t bytes : {kSmall, kLarge}) {
    benchmark::RegisterBenchmark(("memcpy/" + size_name(bytes)).c_str(), bench_memcpy, bytes);
    const bool avx2 = __builtin_cpu_supports("avx2");
    benchmark::RegisterBenchmark(("memread/" + size_name(bytes)).c_str(), bench_memread, bytes,
                                 avx2 ? read_avx2 : read_sse2, avx2 ? "AVX2" : "SSE2");
    if (avx2)
      benchmark::RegisterBenchmark(("memread_streams/" + size_name(bytes)).c_str(), bench_memread, bytes,
                                   read_avx2_streams, "AVX2, 4 parts, 512 B prefetch");
    for (const KernelInfo& k : kernel_table())
      if (kernel_runnable(k))
        benchmark::RegisterBenchmark((kernel_name(k) + "/" + size_name(bytes)).c_str(), bench_kernel, &k, bytes,
                                     std::nullopt)
            ->UseManualTime();
  }
  // Where a streaming unary kernel's plan depends on the CPU's maker (stream_policy.hpp), each
  // maker's plan, run on this host ("x32_not__avx512/256MiB/as:amd"), to compare them in one run.
  for (const KernelInfo& k : kernel_table()) {
    const std::vector<CpuVendor> makers = op_info(k.op).arity == 1
                                              ? cpu::makers_of_each_unary_plan(k.isa, k.width, k.out_width)
                                              : std::vector<CpuVendor>{};
    if (kernel_runnable(k) && makers.size() > 1)
      for (const CpuVendor maker : makers)
        benchmark::RegisterBenchmark(
            (kernel_name(k) + "/" + size_name(kLarge) + "/as:" + std::string(cpu_vendor_name(maker))).c_str(),
            bench_kernel, &k, kLarge, maker)
            ->UseManualTime();
  }
  for (const std::size_t bytes : {kSmall, kLarge}) {
    std::map<std::string, std::vector<const KernelInfo*>> groups;  // by "x32_popcnt_u8"
    for (const KernelInfo& k : kernel_table())
      if (kernel_runnable(k) && k.operands == Operands::vectors) {
        const std::string name = kernel_name(k);
        groups[name.substr(0, name.find("__"))].push_back(&k);
      }
    for (auto& [name, kernels] : groups) {
      const KernelInfo& k = *kernels.front();
      const KernelInfo* dispatched = dispatch_kernel(k.op, k.width, k.out_width, host_isa(), Operands::vectors);
      benchmark::RegisterBenchmark(("choice/" + name + "/" + size_name(bytes)).c_str(), bench_choice, kernels,
                                   dispatched, bytes)
          ->UseManualTime();
    }
  }
  for (const std::size_t n : {std::size_t{16}, kLarge / 4})
    for (const OpKind op : {OpKind::bit_and, OpKind::bit_or, OpKind::bit_xor, OpKind::bit_not, OpKind::shl, OpKind::shr,
                            OpKind::popcount})
      for (const unsigned threads : {1u, 2u})
        benchmark::RegisterBenchmark(
            ("peer/" + std::string(op_info(op).verb) + "/" + (n == 16 ? std::string("4x4") : size_name(n * 4)) +
             "/threads:" + std::to_string(threads))
                .c_str(),
            bench_peer, op, threads, n)
            ->UseManualTime();
  for (const OpKind op : {OpKind::bit_xor, OpKind::shl, OpKind::popcount})
    for (const unsigned threads : {1u, 2u})
      benchmark::RegisterBenchmark(("backend/" + std::string(op_info(op).verb) + "_u32/" + size_name(kLarge) +
                                    "/threads:" + std::to_string(threads))
                                       .c_str(),
                                   bench_backend, op, threads, kLarge)
          ->UseRealTime();
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
