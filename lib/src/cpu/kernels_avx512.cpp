// AVX-512 kernels (F + BW + VL): 512-bit vectors. Every function here carries the target
// attribute and has internal linkage; the file is compiled with the program's ordinary flags.
#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#define DMLBITS_TARGET __attribute__((target("avx512f,avx512bw,avx512vl")))
#include "avx512_ops.hpp"

namespace dmlbits::cpu {
namespace {
template <class T, class Out>
using FusedPopcnt = PopcntOp<T, Out>;
}  // namespace
}  // namespace dmlbits::cpu

#include "fused_loops.hpp"

namespace dmlbits::cpu {
namespace {

constexpr const char* kTag = "avx512";

constexpr std::array kRows{DMLBITS_SET_ROWS};
static_assert(rows_of_set(kRows, kIsa));

constexpr std::array kFusedRows{DMLBITS_FUSED_ROWS};

}  // namespace

std::span<const KernelRow> avx512_kernels() { return kRows; }
std::span<const FusedLoopRow> avx512_fused_loops() { return kFusedRows; }

}  // namespace dmlbits::cpu
