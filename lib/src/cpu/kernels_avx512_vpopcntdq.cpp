// AVX-512 popcount of 32- and 64-bit elements with VPOPCNTD/VPOPCNTQ (AVX512_VPOPCNTDQ), for
// CPUs that have it; the table prefers these over the table-lookup kernels of kernels_avx512.cpp.
#include <immintrin.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#define DMLBITS_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq")))
#include "avx512_ops.hpp"

namespace dmlbits::cpu {
namespace {

struct NativeCounter {
  DMLBITS_TARGET static reg count32(reg v) { return _mm512_popcnt_epi32(v); }
  DMLBITS_TARGET static reg count64(reg v) { return _mm512_popcnt_epi64(v); }
};

template <class T, class Out>
using FusedPopcnt = PopcntOp<T, Out, NativeCounter>;

}  // namespace
}  // namespace dmlbits::cpu

#include "fused_loops.hpp"

namespace dmlbits::cpu {
namespace {

constexpr const char* kTag = "avx512vpopcntdq";

constexpr std::array kRows{
    DMLBITS_UNARY_ROW(popcount, avx512vpopcntdq, PopcntOp<std::uint32_t, std::uint8_t, NativeCounter>),
    DMLBITS_UNARY_ROW(popcount, avx512vpopcntdq, PopcntOp<std::uint32_t, std::uint32_t, NativeCounter>),
    DMLBITS_UNARY_ROW(popcount, avx512vpopcntdq, PopcntOp<std::uint64_t, std::uint8_t, NativeCounter>),
    DMLBITS_UNARY_ROW(popcount, avx512vpopcntdq, PopcntOp<std::uint64_t, std::uint32_t, NativeCounter>),
};
static_assert(rows_of_set(kRows, kIsa));

constexpr std::array kFusedRows{
    DMLBITS_FUSED_POPCOUNT_ROW(std::uint32_t, std::uint8_t),
    DMLBITS_FUSED_POPCOUNT_ROW(std::uint32_t, std::uint32_t),
    DMLBITS_FUSED_POPCOUNT_ROW(std::uint64_t, std::uint8_t),
    DMLBITS_FUSED_POPCOUNT_ROW(std::uint64_t, std::uint32_t),
};

}  // namespace

std::span<const KernelRow> avx512_vpopcntdq_kernels() { return kRows; }
std::span<const FusedLoopRow> avx512_vpopcntdq_fused_loops() { return kFusedRows; }

}  // namespace dmlbits::cpu
