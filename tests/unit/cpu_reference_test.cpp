// The CPU reference backend: the per-element functions on hand-computed values for every element
// width, the shift edge cases in the three overflow modes, and the backend's walk over broadcast
// (stride-0) descriptors. Expected values are worked out by hand, not by running the code.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cpu_reference.hpp"
#include "validate.hpp"

namespace dmlbits {
namespace {

constexpr auto kZero = ShiftOverflow::zero;
constexpr auto kWrap = ShiftOverflow::wrap;
constexpr auto kDml = ShiftOverflow::directml;

// ---- reference_binary / reference_not / reference_popcount ----

TEST(CpuReferenceTest, LogicOpsEveryWidth) {
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::bit_and, 0xCA, 0x5F, kZero), 0x4A);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::bit_or, 0xCA, 0x5F, kZero), 0xDF);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::bit_xor, 0xCA, 0x5F, kZero), 0x95);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::bit_and, 0xF0F0, 0x3C3C, kZero), 0x3030);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::bit_or, 0xF0F0, 0x3C3C, kZero), 0xFCFC);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::bit_xor, 0xF0F0, 0x3C3C, kZero), 0xCCCC);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::bit_and, 0xDEADBEEF, 0x0F0F0F0F, kZero), 0x0E0D0E0Fu);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::bit_or, 0xDEADBEEF, 0x0F0F0F0F, kZero), 0xDFAFBFEFu);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::bit_xor, 0xDEADBEEF, 0x0F0F0F0F, kZero), 0xD1A2B1E0u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::bit_and, 0xFFFF0000FFFF0000, 0x0123456789ABCDEF, kZero),
            0x0123000089AB0000u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::bit_or, 0xFFFF0000FFFF0000, 0x0123456789ABCDEF, kZero),
            0xFFFF4567FFFFCDEFu);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::bit_xor, 0xFFFF0000FFFF0000, 0x0123456789ABCDEF, kZero),
            0xFEDC45677654CDEFu);
  // The documented XOR example, element by element.
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::bit_xor, 42, 15, kZero), 37);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::bit_xor, 255, 240, kZero), 15);
}

TEST(CpuReferenceTest, NotEveryWidth) {
  // The documented NOT example.
  EXPECT_EQ(reference_not<std::uint8_t>(0), 255);
  EXPECT_EQ(reference_not<std::uint8_t>(128), 127);
  EXPECT_EQ(reference_not<std::uint8_t>(42), 213);
  EXPECT_EQ(reference_not<std::uint8_t>(255), 0);
  EXPECT_EQ(reference_not<std::uint16_t>(0x1234), 0xEDCB);
  EXPECT_EQ(reference_not<std::uint32_t>(0x80000001u), 0x7FFFFFFEu);
  EXPECT_EQ(reference_not<std::uint64_t>(0), 0xFFFFFFFFFFFFFFFFu);
  EXPECT_EQ(reference_not<std::uint64_t>(0x00000000FFFFFFFFu), 0xFFFFFFFF00000000u);
}

TEST(CpuReferenceTest, PopcountEveryWidth) {
  // The documented BIT_COUNT example: 123 = 0b1111011, 456 = 0b111001000, 789 = 0b1100010101.
  EXPECT_EQ(reference_popcount<std::uint32_t>(0), 0u);
  EXPECT_EQ(reference_popcount<std::uint32_t>(123), 6u);
  EXPECT_EQ(reference_popcount<std::uint32_t>(456), 4u);
  EXPECT_EQ(reference_popcount<std::uint32_t>(789), 5u);
  EXPECT_EQ(reference_popcount<std::uint8_t>(0xFF), 8u);  // -1 as INT8
  EXPECT_EQ(reference_popcount<std::uint8_t>(0x80), 1u);  // -128 as INT8
  EXPECT_EQ(reference_popcount<std::uint16_t>(0xFFFF), 16u);
  EXPECT_EQ(reference_popcount<std::uint16_t>(0x8000), 1u);  // FLOAT16 -0.0
  EXPECT_EQ(reference_popcount<std::uint16_t>(0x7E00), 6u);  // FLOAT16 quiet NaN
  EXPECT_EQ(reference_popcount<std::uint32_t>(0xFFFFFFFFu), 32u);
  EXPECT_EQ(reference_popcount<std::uint32_t>(0x3F800000u), 7u);  // FLOAT32 1.0
  EXPECT_EQ(reference_popcount<std::uint32_t>(0x7F800000u), 8u);  // FLOAT32 +inf
  EXPECT_EQ(reference_popcount<std::uint64_t>(0xFFFFFFFFFFFFFFFFu), 64u);
  EXPECT_EQ(reference_popcount<std::uint64_t>(0x7FF8000000000000u), 12u);  // FLOAT64 quiet NaN
  EXPECT_EQ(reference_popcount<std::uint64_t>(0x8000000000000001u), 2u);
}

// ---- Shifts: every width, counts 0, 1, width-1, width, width+1, large; every mode ----

template <class T>
void check_shift_edges(T value, T top_bit) {
  constexpr std::uint64_t w = sizeof(T) * 8;
  for (ShiftOverflow mode : {kZero, kWrap, kDml}) {
    EXPECT_EQ(reference_binary<T>(OpKind::shl, value, 0, mode), value) << w;
    EXPECT_EQ(reference_binary<T>(OpKind::shr, value, 0, mode), value) << w;
    EXPECT_EQ(reference_binary<T>(OpKind::shl, 1, static_cast<T>(w - 1), mode), top_bit) << w;
    EXPECT_EQ(reference_binary<T>(OpKind::shr, top_bit, static_cast<T>(w - 1), mode), T{1}) << w;
    // Logical, not arithmetic: the top bit does not smear.
    EXPECT_EQ(reference_binary<T>(OpKind::shr, top_bit, 1, mode), static_cast<T>(top_bit >> 1)) << w;
  }
  // count == width: zero mode gives 0; wrap gives count 0 (the value).
  EXPECT_EQ(reference_binary<T>(OpKind::shl, value, static_cast<T>(w), kZero), T{0}) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shr, value, static_cast<T>(w), kZero), T{0}) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shl, value, static_cast<T>(w), kWrap), value) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shr, value, static_cast<T>(w), kWrap), value) << w;
  // count == width + 1: zero mode 0; wrap shifts by 1.
  EXPECT_EQ(reference_binary<T>(OpKind::shl, value, static_cast<T>(w + 1), kZero), T{0}) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shr, value, static_cast<T>(w + 1), kZero), T{0}) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shl, value, static_cast<T>(w + 1), kWrap), static_cast<T>(value << 1)) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shr, value, static_cast<T>(w + 1), kWrap), static_cast<T>(value >> 1)) << w;
  // The largest count: zero mode 0; wrap uses max % width = width - 1.
  const T max = static_cast<T>(~T{0});
  EXPECT_EQ(reference_binary<T>(OpKind::shl, value, max, kZero), T{0}) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shl, T{1}, max, kWrap), top_bit) << w;
  EXPECT_EQ(reference_binary<T>(OpKind::shr, top_bit, max, kWrap), T{1}) << w;
}

TEST(CpuReferenceTest, ShiftEdgesEveryWidth) {
  check_shift_edges<std::uint8_t>(0xA5, 0x80);
  check_shift_edges<std::uint16_t>(0xA5C3, 0x8000);
  check_shift_edges<std::uint32_t>(0xA5C3F00Fu, 0x80000000u);
  check_shift_edges<std::uint64_t>(0xA5C3F00F12345678u, 0x8000000000000000u);
}

TEST(CpuReferenceTest, ShiftHandComputedValues) {
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 1, kZero), 0x02);  // top bit falls off
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0xFF, 4, kZero), 0xF0);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shr, 0xFF, 4, kZero), 0x0F);
  // Wrap is count modulo width over the whole count, not HLSL's low 5 bits: 9 % 8 = 1.
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 9, kWrap), 0x02);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 9, kZero), 0x00);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shr, 0xF0, 200, kWrap), 0xF0);  // 200 % 8 = 0
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shr, 0xF0, 200, kZero), 0x00);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shl, 0x0001, 17, kWrap), 0x0002);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shr, 0x8000, 1000, kWrap), 0x0080);  // 1000 % 16 = 8
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::shl, 0x12345678u, 33, kWrap), 0x2468ACF0u);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::shr, 0x12345678u, 0x80000003u, kWrap), 0x02468ACFu);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::shr, 0x12345678u, 0x80000003u, kZero), 0u);
  // 2^40 + 3 wraps to 3 (64 divides 2^40); the low 5 bits of the count would also be 3, so add
  // 2^63 + 5: % 64 = 5.
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 1, (std::uint64_t{1} << 40) + 3, kWrap), 8u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 1, (std::uint64_t{1} << 40) + 3, kZero), 0u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shr, 0x8000000000000000u, (std::uint64_t{1} << 63) + 5, kWrap),
            0x0400000000000000u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 0xFFu, 60, kZero), 0xF000000000000000u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shr, 0xFFu, 65, kWrap), 0x7Fu);
}

// The directml mode, worked out by hand from the rule DirectML 1.15.4 was measured to follow
// (man page, --shift-overflow): up to 32 bits a 32-bit lane shifted by count & 31 and cut back
// to the width; 64 bits c = the count's low 32 bits, c if c < 32, else 32 and then c & 31.
TEST(CpuReferenceTest, ShiftDirectmlMeasuredValues) {
  // The values measured on DirectML itself (shared reference, directml-under-wine.md).
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0xF4, 32, kDml), 0xF4);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0xF5, 35, kDml), 0xA8);       // 0xF5 << 3 = 0x7A8
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0xF7, 41, kDml), 0x00);       // by 9
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shl, 0xF3F3, 33, kDml), 0xE7E6);  // 0x1E7E6
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shr, 0xD69A5E00F2F2F2F2u, 64, kDml), 0x00000000D69A5E00u);
}

TEST(CpuReferenceTest, ShiftDirectmlHandComputedValues) {
  // 8 bits: counts 8..31 empty the lane's low byte, 32..39 shift by count - 32, 40..63 empty it.
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 7, kDml), 0x80);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 8, kDml), 0x00);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shr, 0x81, 8, kDml), 0x00);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 31, kDml), 0x00);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shr, 0x81, 33, kDml), 0x40);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shr, 0x81, 39, kDml), 0x01);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shr, 0x81, 40, kDml), 0x00);
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 64, kDml), 0x81);   // 64 & 31 = 0
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0x81, 225, kDml), 0x02);  // 225 & 31 = 1
  EXPECT_EQ(reference_binary<std::uint8_t>(OpKind::shl, 0xFF, 255, kDml), 0x00);  // 255 & 31 = 31
  // 16 bits: 16..31 give 0, 32..47 shift by count - 32.
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shl, 0x8001, 16, kDml), 0x0000);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shr, 0x8001, 17, kDml), 0x0000);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shr, 0x8001, 32, kDml), 0x8001);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shr, 0x8001, 47, kDml), 0x0001);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shl, 0x8001, 48, kDml), 0x0000);
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shl, 0x00FF, 1000, kDml), 0xFF00);   // 1000 & 31 = 8
  EXPECT_EQ(reference_binary<std::uint16_t>(OpKind::shl, 0x0001, 65535, kDml), 0x0000);  // by 31
  // 32 bits: the count modulo 32, as wrap.
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::shl, 0x12345678u, 32, kDml), 0x12345678u);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::shl, 0x12345678u, 33, kDml), 0x2468ACF0u);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::shr, 0x12345678u, 0x80000003u, kDml), 0x02468ACFu);
  EXPECT_EQ(reference_binary<std::uint32_t>(OpKind::shr, 0x80000000u, 0xFFFFFFFFu, kDml), 1u);
  // 64 bits: 32..63 exact, 64 by 32, 67 by 35, 2^32 - 1 by 63; the high word is ignored.
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 0xFFu, 60, kDml), 0xF000000000000000u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 1, 64, kDml), 0x100000000u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 1, 67, kDml), 0x800000000u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shr, 0x8000000000000000u, 95, kDml), 1u);           // by 63
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shr, 0x8000000000000000u, 96, kDml), 0x80000000u);  // by 32
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 1, 0xFFFFFFFFu, kDml), 0x8000000000000000u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 1, (std::uint64_t{1} << 32) + 3, kDml), 8u);
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shl, 5, std::uint64_t{1} << 40, kDml), 5u);  // c = 0
  EXPECT_EQ(reference_binary<std::uint64_t>(OpKind::shr, 0x8000000000000000u, ~std::uint64_t{0}, kDml), 1u);
}

// ---- The backend on validated descriptors ----

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class Out>
std::vector<Out> values_of(const std::vector<std::byte>& b) {
  std::vector<Out> v(b.size() / sizeof(Out));
  if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Runs a binary op on the CPU backend. Input buffers are exactly the operands' packed bytes.
template <class T>
std::vector<T> run_binary(OpKind op, DType dtype, const std::vector<T>& a, const Shape& sa, const std::vector<T>& b,
                          const Shape& sb, ShiftOverflow mode = kZero) {
  OpRequest r;
  r.op = op;
  r.inputs = {{dtype, sa}, {dtype, sb}};
  r.shift_overflow = mode;
  const ValidatedOp v = validate(r);
  const auto ab = bytes_of(a), bb = bytes_of(b);
  std::vector<std::byte> out(v.output_shape().element_count() * sizeof(T));
  CpuReferenceBackend backend;
  backend.run(v, {{ab, bb}, out});
  return values_of<T>(out);
}

TEST(CpuReferenceTest, BackendBroadcastsTrailingVector) {
  // (2, 3) & (3,): B repeats along the rows.
  const std::vector<std::uint16_t> a{0x00FF, 0x0F0F, 0xFFFF, 0x1234, 0xFF00, 0x8001};
  const std::vector<std::uint16_t> b{0x0FF0, 0x00FF, 0x8000};
  EXPECT_EQ(run_binary(OpKind::bit_and, DType::uint16, a, Shape{2, 3}, b, Shape{3}),
            (std::vector<std::uint16_t>{0x00F0, 0x000F, 0x8000, 0x0230, 0x0000, 0x8000}));
  // Swapped: A is the broadcast one.
  EXPECT_EQ(run_binary(OpKind::bit_or, DType::uint16, b, Shape{3}, a, Shape{2, 3}),
            (std::vector<std::uint16_t>{0x0FFF, 0x0FFF, 0xFFFF, 0x1FF4, 0xFFFF, 0x8001}));
}

TEST(CpuReferenceTest, BackendBroadcastsColumnAgainstRow) {
  // (3, 1) ^ (1, 4) -> (3, 4): out[i][j] = a[i] ^ b[j].
  const std::vector<std::uint8_t> a{0x00, 0xFF, 0x0F};
  const std::vector<std::uint8_t> b{0x01, 0x02, 0x80, 0xF0};
  EXPECT_EQ(run_binary(OpKind::bit_xor, DType::uint8, a, Shape{3, 1}, b, Shape{1, 4}),
            (std::vector<std::uint8_t>{0x01, 0x02, 0x80, 0xF0,  //
                                       0xFE, 0xFD, 0x7F, 0x0F,  //
                                       0x0E, 0x0D, 0x8F, 0xFF}));
}

TEST(CpuReferenceTest, BackendBroadcastsScalarAndMiddleDimension) {
  // 0-d count against (5,) values, zero mode: counts >= 32 give 0.
  EXPECT_EQ(run_binary(OpKind::shl, DType::uint32, std::vector<std::uint32_t>{1, 2, 3, 0x80000000u, 0xFFFFFFFFu},
                       Shape{5}, std::vector<std::uint32_t>{4}, Shape{}),
            (std::vector<std::uint32_t>{16, 32, 48, 0, 0xFFFFFFF0u}));
  // 0-d value shifted by (5,) counts, wrap mode.
  EXPECT_EQ(run_binary(OpKind::shr, DType::uint32, std::vector<std::uint32_t>{0x80000000u}, Shape{},
                       std::vector<std::uint32_t>{0, 31, 32, 33, 63}, Shape{5}, kWrap),
            (std::vector<std::uint32_t>{0x80000000u, 1, 0x80000000u, 0x40000000u, 1}));
  // (2, 1, 2) | (3, 1) -> (2, 3, 2): out[i][j][k] = a[i][k] | b[j].
  const std::vector<std::uint64_t> a{0x1, 0x2, 0x10, 0x20};
  const std::vector<std::uint64_t> b{0x100, 0x200, 0x400};
  EXPECT_EQ(run_binary(OpKind::bit_or, DType::uint64, a, Shape{2, 1, 2}, b, Shape{3, 1}),
            (std::vector<std::uint64_t>{0x101, 0x102, 0x201, 0x202, 0x401, 0x402,  //
                                        0x110, 0x120, 0x210, 0x220, 0x410, 0x420}));
}

TEST(CpuReferenceTest, BackendRunsSignedAndFloatOnRawBits) {
  // INT8 AND: -1 & x = x; -128 & 127 = 0.
  EXPECT_EQ(run_binary(OpKind::bit_and, DType::int8, std::vector<std::int8_t>{-1, -128, -2}, Shape{3},
                       std::vector<std::int8_t>{42, 127, -3}, Shape{3}),
            (std::vector<std::int8_t>{42, 0, -4}));  // 0xFE & 0xFD = 0xFC = -4
  // FLOAT32 XOR with the sign bit negates, including -0.0 and inf.
  const std::uint32_t sign = 0x80000000u;
  std::vector<std::uint32_t> a{0x3F800000u, 0x00000000u, 0x7F800000u, 0x7FC00001u};
  std::vector<std::uint32_t> b{sign};
  OpRequest r;
  r.op = OpKind::bit_xor;
  r.inputs = {{DType::float32, Shape{4}}, {DType::float32, Shape{}}};
  const ValidatedOp v = validate(r);
  const auto ab = bytes_of(a), bb = bytes_of(b);
  std::vector<std::byte> out(16);
  CpuReferenceBackend backend;
  backend.run(v, {{ab, bb}, out});
  EXPECT_EQ(values_of<std::uint32_t>(out),
            (std::vector<std::uint32_t>{0xBF800000u, 0x80000000u, 0xFF800000u, 0xFFC00001u}));
}

TEST(CpuReferenceTest, BackendPopcountBothOutputTypes) {
  const std::vector<std::int16_t> in{-1, -32768, 0, 0x5555, 7};
  const auto ib = bytes_of(in);
  for (DType out_dtype : {DType::uint8, DType::uint32}) {
    OpRequest r;
    r.op = OpKind::popcount;
    r.inputs = {{DType::int16, Shape{5}}};
    r.out_dtype = out_dtype;
    const ValidatedOp v = validate(r);
    std::vector<std::byte> out(5 * dtype_info(out_dtype).size);
    CpuReferenceBackend backend;
    backend.run(v, {{ib}, out});
    if (out_dtype == DType::uint8) EXPECT_EQ(values_of<std::uint8_t>(out), (std::vector<std::uint8_t>{16, 1, 0, 8, 3}));
    else EXPECT_EQ(values_of<std::uint32_t>(out), (std::vector<std::uint32_t>{16, 1, 0, 8, 3}));
  }
}

TEST(CpuReferenceTest, BackendNotOnEightDimensions) {
  const Shape shape{1, 2, 1, 2, 1, 2, 1, 2};
  std::vector<std::uint8_t> in(16);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::uint8_t>(i * 17);
  OpRequest r;
  r.op = OpKind::bit_not;
  r.inputs = {{DType::uint8, shape}};
  const ValidatedOp v = validate(r);
  const auto ib = bytes_of(in);
  std::vector<std::byte> out(16);
  CpuReferenceBackend backend;
  backend.run(v, {{ib}, out});
  const auto got = values_of<std::uint8_t>(out);
  for (std::size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got[i], static_cast<std::uint8_t>(255 - i * 17)) << i;
}

TEST(CpuReferenceTest, BackendInPlaceOverwritesA) {
  std::vector<std::uint8_t> a{0x0F, 0xF0, 0xAA, 0x55};
  const std::vector<std::uint8_t> b{0xFF};
  OpRequest r;
  r.op = OpKind::bit_xor;
  r.inputs = {{DType::uint8, Shape{4}}, {DType::uint8, Shape{}}};
  r.in_place = true;
  const ValidatedOp v = validate(r);
  auto* ap = reinterpret_cast<std::byte*>(a.data());
  const auto bb = bytes_of(b);
  CpuReferenceBackend backend;
  backend.run(v, {{std::span<const std::byte>(ap, 4), bb}, std::span<std::byte>(ap, 4)});
  EXPECT_EQ(a, (std::vector<std::uint8_t>{0xF0, 0x0F, 0x55, 0xAA}));
}

TEST(CpuReferenceTest, BackendEmptyWritesNothing) {
  OpRequest r;
  r.op = OpKind::bit_and;
  r.inputs = {{DType::uint32, Shape{0, 3}}, {DType::uint32, Shape{3}}};
  const ValidatedOp v = validate(r);
  ASSERT_TRUE(v.desc().empty);
  const std::vector<std::uint32_t> b{1, 2, 3};
  const auto bb = bytes_of(b);
  CpuReferenceBackend backend;
  EXPECT_NO_THROW(backend.run(v, {{std::span<const std::byte>(), bb}, std::span<std::byte>()}));
}

}  // namespace
}  // namespace dmlbits
