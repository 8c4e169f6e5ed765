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

constexpr const char* kTag = "avx512";

#define DMLBITS_WIDTH_ROWS(T)                                                                   \
  DMLBITS_BINARY_ROWS(bit_and, AndOp, T), DMLBITS_BINARY_ROWS(bit_or, OrOp, T),                 \
      DMLBITS_BINARY_ROWS(bit_xor, XorOp, T), DMLBITS_BINARY_ROWS(shl, ShlOp, T),               \
      DMLBITS_BINARY_ROWS(shr, ShrOp, T), DMLBITS_UNARY_ROW(bit_not, none, NotOp<T>),           \
      DMLBITS_UNARY_ROW(popcount, none, PopcntOp<T, std::uint8_t, LutCounter>),                \
      DMLBITS_UNARY_ROW(popcount, none, PopcntOp<T, std::uint32_t, LutCounter>)

constexpr std::array kRows{
    DMLBITS_WIDTH_ROWS(std::uint8_t),
    DMLBITS_WIDTH_ROWS(std::uint16_t),
    DMLBITS_WIDTH_ROWS(std::uint32_t),
    DMLBITS_WIDTH_ROWS(std::uint64_t),
};

}  // namespace

std::span<const KernelRow> avx512_kernels() { return kRows; }

}  // namespace dmlbits::cpu
