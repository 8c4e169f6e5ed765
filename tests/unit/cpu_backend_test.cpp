// The "cpu" backend's SIMD kernels and dispatch, checked byte for byte against the reference
// backend (the executable specification, itself checked by hand and against NumPy): every
// kernel of the table that this CPU can run (one test each, named after the kernel; the others
// are reported as skipped), at sizes around every vector and block width, at unaligned
// addresses, in place, with B (or A) a broadcast element, and with shift counts below, at and
// beyond the element width in every overflow mode; then the backend itself on broadcast
// descriptors, threaded runs and each instruction set the CPU has, plus instruction-set
// detection, overrides and the kernel table's coverage.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "make_backend.hpp"
#include "cpu_backend.hpp"
#include "cpu_isa.hpp"
#include "cpu_reference.hpp"
#include "stream_policy.hpp"
#include "dmlbits/error.hpp"
#include "unit_support.hpp"
#include "dmlbits/tensor.hpp"
#include "validate.hpp"

namespace dmlbits {
namespace {

using Bytes = std::vector<std::byte>;

constexpr std::array<unsigned, 4> kWidths{1, 2, 4, 8};
constexpr std::array<Operands, 3> kAllOperands{Operands::vectors, Operands::b_scalar, Operands::a_scalar};

DType unsigned_dtype(unsigned width) {
  switch (width) {
    case 1:
      return DType::uint8;
    case 2:
      return DType::uint16;
    case 4:
      return DType::uint32;
    default:
      return DType::uint64;
  }
}

// The output widths of an operator's kernels at input width `width`: the input's, or those of
// the table's output types (popcount: 1 and 4).
std::vector<unsigned> out_widths(OpKind op, unsigned width) {
  const OpInfo& info = op_info(op);
  if (info.output_dtype_is_input_dtype()) return {width};
  std::vector<unsigned> widths;
  for (const DTypeInfo& t : dtype_table())
    if (info.tiers.back().outputs.contains(t.dtype)) widths.push_back(static_cast<unsigned>(t.size));
  return widths;
}

bool is_shift(OpKind op) { return op_info(op).shift; }
bool is_binary(OpKind op) { return op_info(op).arity == 2; }

// Element values: for shift counts, a mix that puts many counts just below, at and just above
// the width, some around 32 and its multiples (where the directml mode's 32-bit lane wraps),
// and some far beyond (whole-width values such as 2^40 for 64-bit elements, and 64-bit counts
// whose low 32 bits are small or large); otherwise random bits with the all-zero and all-one
// patterns mixed in.
Bytes random_elements(std::size_t n, unsigned width, bool counts, std::mt19937_64& rng) {
  const unsigned bits = width * 8;
  const std::uint64_t mask = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  Bytes out(n * width);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t v = rng();
    const unsigned pick = static_cast<unsigned>(rng() % 10);
    if (counts) {
      if (pick < 4) v = rng() % (bits + 3);                                     // 0 .. width + 2
      else if (pick == 4) v = bits - 1 + rng() % 3;                             // width - 1, width, width + 1
      else if (pick == 5) v = std::uint64_t{1} << (rng() % bits);               // powers of two, up to the top bit
      else if (pick == 6) v = (rng() % 2) ? mask : 2 * bits;                    // all ones; twice the width
      else if (pick == 7) v = rng() % 100;                                      // 0 .. 99: 32, 64, 96 and between
      else if (pick == 8) v = (v & ~std::uint64_t{0xFFFFFFFF}) | (rng() % 70);  // a high word, a small low one
    } else {
      if (pick == 0) v = 0;
      else if (pick == 1) v = mask;
    }
    store_bits(out.data(), width, i, v & mask);
  }
  return out;
}

// The reference backend's result for the same operation, built through validate().
Bytes reference_result(OpKind op, unsigned width, unsigned out_width, Operands operands, ShiftOverflow mode,
                       const Bytes& a, const Bytes& b, std::size_t n) {
  const DType dt = unsigned_dtype(width);
  OpRequest r;
  r.op = op;
  r.shift_overflow = mode;
  const Shape run{n};
  const Shape one{};  // 0-d: broadcast over the run
  r.inputs.push_back({dt, operands == Operands::a_scalar ? one : run});
  if (is_binary(op)) r.inputs.push_back({dt, operands == Operands::b_scalar ? one : run});
  if (!op_info(op).output_dtype_is_input_dtype()) r.out_dtype = unsigned_dtype(out_width);
  const ValidatedOp v = validate(r);
  Bytes out(n * out_width);
  ExecuteBuffers buffers;
  buffers.inputs.push_back(a);
  if (is_binary(op)) buffers.inputs.push_back(b);
  buffers.output = out;
  CpuReferenceBackend().run(v, buffers);
  return out;
}

// Sizes around every vector width (16, 32 and 64 bytes) and the kernels' blocks and unrolled
// loops (up to 4 x 256 bytes), plus small and odd large ones; 36871 elements cover at least one
// group of the streaming unary loop's input pages (unary_body_pages: up to eight 4 KiB pages,
// for the AVX-512 same-width operations) at every width, and four whole parts of the narrowing
// popcounts' (unary_body_parts), each with a tail. StreamPoliciesTest checks these sizes
// against the streaming policies.
std::vector<std::size_t> test_sizes(unsigned width) {
  std::set<std::size_t> sizes{0, 1, 2, 3, 5, 7, 4099, 10007, 36871};
  for (std::size_t bytes : {16, 32, 64, 128, 256, 512, 1024}) {
    const std::size_t lanes = bytes / width;
    for (std::size_t n : {lanes - 1, lanes, lanes + 1})
      if (n > 0) sizes.insert(n);
  }
  return {sizes.begin(), sizes.end()};
}

constexpr std::size_t kGuard = 64;
constexpr std::byte kCanary{0xA5};

// The CPU makers to stream as: one for each different plan a unary SIMD kernel has
// (stream_policy.hpp), so that every plan runs on any host; for other kernels the host's.
std::vector<std::optional<CpuVendor>> makers_to_stream_as(const KernelInfo& k) {
  if (is_binary(k.op) || k.isa == Isa::scalar) return {std::nullopt};
  const std::vector<CpuVendor> makers = cpu::makers_of_each_unary_plan(k.isa, k.width, k.out_width);
  return {makers.begin(), makers.end()};
}

class KernelTest : public ::testing::TestWithParam<std::size_t> {};

TEST_P(KernelTest, MatchesReference) {
  const KernelInfo& k = kernel_table()[GetParam()];
  if (!kernel_runnable(k))
    GTEST_SKIP() << kernel_name(k) << ": this CPU lacks " << isa_name(k.isa)
                 << (k.extension != CpuExtension::none ? " or the kernel's extension" : "") << " (compiled, not run)";
  const bool binary = is_binary(k.op);
  const std::size_t ow = k.out_width;
  const bool may_run_in_place = op_info(k.op).allows_in_place() && k.operands != Operands::a_scalar;
  std::mt19937_64 rng(0x5eed0000 + GetParam());
  int cases = 0;
  const std::vector<std::optional<CpuVendor>> stream_makers = makers_to_stream_as(k), host_only{std::nullopt};
  for (const ShiftOverflow mode : shift_overflow_modes()) {
    if (mode != ShiftOverflow::zero && !is_shift(k.op)) continue;
    for (const std::size_t n : test_sizes(k.width)) {
      const std::size_t na = k.operands == Operands::a_scalar ? 1 : n;
      const std::size_t nb = k.operands == Operands::b_scalar ? 1 : n;
      const Bytes a = random_elements(na, k.width, false, rng);
      const Bytes b = binary ? random_elements(nb, k.width, is_shift(k.op), rng) : Bytes{};
      const Bytes expect = reference_result(k.op, k.width, k.out_width, k.operands, mode, a, b, n);
      // Misaligned by 0..3 bytes, each buffer differently; canaries either side of the output.
      // SIMD kernels switch to non-temporal stores for large outputs; a threshold of 0 takes
      // that path (aligned head, streamed body, tail) at every size. Those passes put the
      // output 0, 4 or 16 bytes past a 64-byte boundary (no head; a head of 4- and 8-byte
      // elements, or longer than one block of a narrowing popcount), or 3 (which cannot align
      // wider elements, so the kernel must keep to ordinary stores). Outputs of 4 KiB and more
      // are stored aligned on the cached path too: its passes put the output 3, 16, 8 or 0
      // bytes past a boundary (no head where 3 cannot align the elements; a head of every
      // width; of all but 16-byte elements; none).
      // Streaming passes run once for each plan the kernel has, by CPU maker.
      for (std::size_t pass = 0; pass < (k.isa != Isa::scalar ? 16u : 8u); ++pass) {
        for (const std::optional<CpuVendor> maker : pass >= 8 ? stream_makers : host_only) {
          const std::size_t offset = pass % 4;
          const bool in_place = (pass / 4) % 2 == 1;
          const bool stream = pass >= 8;
          if (in_place && !may_run_in_place) continue;
          const KernelParams params{mode, stream ? 0 : ~std::size_t{0}, maker};
          {
            SCOPED_TRACE(testing::Message() << kernel_name(k) << " n=" << n << " offset=" << offset
                                            << " mode=" << shift_overflow_name(mode) << (in_place ? " in place" : "")
                                            << (stream ? " streaming" : "")
                                            << (maker ? " as " + std::string(cpu_vendor_name(*maker)) : std::string()));
            Bytes abuf(a.size() + 8), bbuf(b.size() + 8), obuf(kGuard + 64 + 16 + n * ow + kGuard, kCanary);
            std::byte* pa = abuf.data() + offset;
            std::byte* pb = bbuf.data() + (offset + 1) % 4;
            const auto guard_end = reinterpret_cast<std::uintptr_t>(obuf.data() + kGuard);
            std::byte* const aligned = obuf.data() + kGuard + ((64 - guard_end % 64) % 64);
            constexpr std::array<std::size_t, 4> kStreamShift{0, 4, 16, 3}, kCachedShift{3, 16, 8, 0};
            std::byte* po = aligned + (stream ? kStreamShift[offset] : kCachedShift[offset]);
            std::copy(a.begin(), a.end(), pa);
            std::copy(b.begin(), b.end(), pb);
            const void* in_a = pa;
            if (in_place) {
              std::copy(a.begin(), a.end(), po);
              in_a = po;
            }
            k.fn(n, in_a, binary ? pb : nullptr, po, params);
            ++cases;
            ASSERT_TRUE(std::equal(expect.begin(), expect.end(), po)) << "result differs from the reference";
            for (std::byte* p = obuf.data(); p < po; ++p) ASSERT_EQ(*p, kCanary) << "wrote before the output";
            for (std::byte* p = po + n * ow; p < obuf.data() + obuf.size(); ++p)
              ASSERT_EQ(*p, kCanary) << "wrote past the output";
            if (!in_place) {
              ASSERT_TRUE(std::equal(a.begin(), a.end(), pa)) << "input A changed";
            }
            ASSERT_TRUE(std::equal(b.begin(), b.end(), pb)) << "input B changed";
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 0);
}

INSTANTIATE_TEST_SUITE_P(AllKernels, KernelTest, ::testing::Range<std::size_t>(0, kernel_table().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& param) {
                           return kernel_name(kernel_table()[param.param]);
                         });

// Every plan of every streaming policy (stream_policy.hpp) is run by KernelTest: its largest
// size holds a whole group of the plan's lanes and more, at every width, so that the lanes, the
// rest after them and the partial tail all run with non-temporal stores. A policy with more or
// wider lanes must grow test_sizes. And a plan that reads in distant parts is never given to an
// operation that may run in place (its parts would read what another part wrote).
template <class Policy>
void check_stream_policy(const char* name) {
  // The largest block a SIMD unary kernel reads: two 512-bit vectors (or four 256-bit ones).
  constexpr std::size_t kMaxBlockBytes = 128;
  for (const OpInfo& op : op_table()) {
    for (const unsigned width : kWidths) {
      const std::size_t largest = test_sizes(width).back() * width;  // input bytes
      SCOPED_TRACE(testing::Message() << name << " " << op.verb << " x" << width * 8);
      if (op.arity == 2) continue;  // one stream: any size past a few vectors runs the plan
      for (const unsigned ow : out_widths(op.kind, width))
        for (const CpuVendor maker : cpu::kCpuVendors) {
          const cpu::UnaryStream plan = Policy::unary(width, ow, maker);
          SCOPED_TRACE(testing::Message() << "into x" << ow * 8 << " as " << cpu_vendor_name(maker));
          EXPECT_GE(plan.lanes, 1u);
          if (plan.read == cpu::UnaryRead::pages) {
            EXPECT_EQ(plan.prefetch_bytes, plan.lanes * 4096) << "pages prefetch the next group";
            EXPECT_GT(largest, plan.lanes * 4096 + kMaxBlockBytes) << "test_sizes reach no whole group of pages";
          } else {
            EXPECT_FALSE(op.allows_in_place()) << "parts read what other parts wrote: never in place";
            EXPECT_GT(width, ow) << "parts are for narrowing operations";
            EXPECT_GT(largest, plan.lanes * cpu::kUnroll * kMaxBlockBytes + kMaxBlockBytes)
                << "test_sizes reach no whole step in every part";
          }
        }
    }
  }
}

TEST(StreamPoliciesTest, TestSizesRunEveryPlanAndPartsNeverRunInPlace) {
  check_stream_policy<cpu::Avx2StreamPolicy>("Avx2StreamPolicy");
  check_stream_policy<cpu::Avx512StreamPolicy>("Avx512StreamPolicy");
}

// A few results worked out by hand, through every runnable kernel of the operation, so that the
// kernels are not only as right as the reference.
template <class T>
T run_one(const KernelInfo& k, T a, T b, ShiftOverflow mode) {
  // 37 elements: the value sits in a vector body for some sets and in a tail for others.
  std::vector<T> va(37, a), vb(37, b), out(37);
  k.fn(va.size(), va.data(), vb.data(), out.data(), KernelParams{mode});
  for (T x : out) EXPECT_EQ(x, out[0]) << kernel_name(k);
  return out[0];
}

template <class Out, class T>
Out popcount_one(const KernelInfo& k, T a) {
  std::vector<T> va(37, a);
  std::vector<Out> out(37);
  k.fn(va.size(), va.data(), nullptr, out.data(), KernelParams{});
  for (Out x : out) EXPECT_EQ(x, out[0]) << kernel_name(k);
  return out[0];
}

TEST(CpuKernelsTest, HandWorkedValues) {
  constexpr auto kZero = ShiftOverflow::zero;
  constexpr auto kWrap = ShiftOverflow::wrap;
  constexpr auto kDml = ShiftOverflow::directml;
  int checked = 0;
  for (const KernelInfo& k : kernel_table()) {
    if (!kernel_runnable(k) || k.operands != Operands::vectors) continue;
    SCOPED_TRACE(kernel_name(k));
    ++checked;
    switch (k.op) {
      case OpKind::shl:
        if (k.width == 1) {
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x81, 1, kZero), 0x02);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0xFF, 7, kZero), 0x80);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0xFF, 8, kZero), 0x00);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x01, 9, kWrap), 0x02);  // 9 mod 8 = 1
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x01, 255, kZero), 0x00);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0xF4, 32, kDml), 0xF4);  // measured on DirectML
          EXPECT_EQ(run_one<std::uint8_t>(k, 0xF5, 35, kDml), 0xA8);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0xF7, 41, kDml), 0x00);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x81, 8, kDml), 0x00);
        } else if (k.width == 2) {
          EXPECT_EQ(run_one<std::uint16_t>(k, 0x8001, 1, kZero), 0x0002);
          EXPECT_EQ(run_one<std::uint16_t>(k, 0x00FF, 12, kZero), 0xF000);
          EXPECT_EQ(run_one<std::uint16_t>(k, 1, 16, kZero), 0);
          EXPECT_EQ(run_one<std::uint16_t>(k, 1, 17, kWrap), 2);  // 17 mod 16 = 1
          EXPECT_EQ(run_one<std::uint16_t>(k, 1, 0x8000, kZero), 0);
          EXPECT_EQ(run_one<std::uint16_t>(k, 0xF3F3, 33, kDml), 0xE7E6);  // measured on DirectML
          EXPECT_EQ(run_one<std::uint16_t>(k, 1, 16, kDml), 0);
          EXPECT_EQ(run_one<std::uint16_t>(k, 1, 0x8000, kDml), 1);  // 0x8000 & 31 = 0
        } else if (k.width == 4) {
          EXPECT_EQ(run_one<std::uint32_t>(k, 1, 31, kZero), 0x80000000u);
          EXPECT_EQ(run_one<std::uint32_t>(k, 1, 32, kZero), 0u);
          EXPECT_EQ(run_one<std::uint32_t>(k, 1, 33, kWrap), 2u);
          EXPECT_EQ(run_one<std::uint32_t>(k, 3, 0xFFFFFFFFu, kWrap), 0x80000000u);  // count 31
          EXPECT_EQ(run_one<std::uint32_t>(k, 1, 33, kDml), 2u);
        } else {
          EXPECT_EQ(run_one<std::uint64_t>(k, 1, 63, kZero), 0x8000000000000000u);
          EXPECT_EQ(run_one<std::uint64_t>(k, 1, 64, kZero), 0u);
          EXPECT_EQ(run_one<std::uint64_t>(k, 1, std::uint64_t{1} << 40, kZero), 0u);
          EXPECT_EQ(run_one<std::uint64_t>(k, 1, (std::uint64_t{1} << 40) + 3, kWrap), 8u);
          EXPECT_EQ(run_one<std::uint64_t>(k, 1, 64, kDml), 0x100000000u);                  // by 32
          EXPECT_EQ(run_one<std::uint64_t>(k, 1, 67, kDml), 0x800000000u);                  // by 35
          EXPECT_EQ(run_one<std::uint64_t>(k, 1, 0xFFFFFFFFu, kDml), 0x8000000000000000u);  // by 63
          EXPECT_EQ(run_one<std::uint64_t>(k, 5, std::uint64_t{1} << 40, kDml), 5u);        // low word 0
        }
        break;
      case OpKind::shr:
        if (k.width == 1) {
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x81, 1, kZero), 0x40);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x80, 7, kZero), 0x01);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x80, 8, kZero), 0x00);
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x80, 15, kWrap), 0x01);  // 15 mod 8 = 7
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x80, 39, kDml), 0x01);   // 39 & 31 = 7
          EXPECT_EQ(run_one<std::uint8_t>(k, 0x80, 31, kDml), 0x00);
        } else if (k.width == 2) {
          EXPECT_EQ(run_one<std::uint16_t>(k, 0x8000, 15, kZero), 1);
          EXPECT_EQ(run_one<std::uint16_t>(k, 0x8000, 16, kZero), 0);
          EXPECT_EQ(run_one<std::uint16_t>(k, 0x8000, 31, kWrap), 1);
          EXPECT_EQ(run_one<std::uint16_t>(k, 0x8000, 31, kDml), 0);
          EXPECT_EQ(run_one<std::uint16_t>(k, 0x8000, 47, kDml), 1);
        } else if (k.width == 4) {
          EXPECT_EQ(run_one<std::uint32_t>(k, 0x80000000u, 31, kZero), 1u);
          EXPECT_EQ(run_one<std::uint32_t>(k, 0x80000000u, 0x100000000u - 1, kZero), 0u);
          EXPECT_EQ(run_one<std::uint32_t>(k, 0x80000000u, 32 + 4, kWrap), 0x08000000u);
          EXPECT_EQ(run_one<std::uint32_t>(k, 0x80000000u, 0xFFFFFFFFu, kDml), 1u);
        } else {
          EXPECT_EQ(run_one<std::uint64_t>(k, 0x8000000000000000u, 63, kZero), 1u);
          EXPECT_EQ(run_one<std::uint64_t>(k, 0x8000000000000000u, 64, kZero), 0u);
          EXPECT_EQ(run_one<std::uint64_t>(k, 0x8000000000000000u, std::uint64_t{1} << 40, kZero), 0u);
          EXPECT_EQ(run_one<std::uint64_t>(k, 0xD69A5E00F2F2F2F2u, 64, kDml), 0xD69A5E00u);  // measured
          EXPECT_EQ(run_one<std::uint64_t>(k, 0x8000000000000000u, 95, kDml), 1u);           // by 63
        }
        break;
      case OpKind::bit_xor:
        if (k.width == 1) {
          EXPECT_EQ(run_one<std::uint8_t>(k, 42, 15, kZero), 37);
        }  // DirectML's example
        if (k.width == 8) {
          EXPECT_EQ(run_one<std::uint64_t>(k, 0xFFFF0000FFFF0000u, 0x0123456789ABCDEFu, kZero), 0xFEDC45677654CDEFu);
        }
        break;
      case OpKind::bit_not:
        if (k.width == 1) {
          EXPECT_EQ(run_one<std::uint8_t>(k, 42, 0, kZero), 213);
        }  // DirectML's example
        if (k.width == 4) {
          EXPECT_EQ(run_one<std::uint32_t>(k, 0x80000001u, 0, kZero), 0x7FFFFFFEu);
        }
        break;
      case OpKind::popcount:
        if (k.out_width == 4) {
          if (k.width == 1) {
            EXPECT_EQ((popcount_one<std::uint32_t, std::uint8_t>(k, 0x80)), 1u);
          }
          if (k.width == 2) {
            EXPECT_EQ((popcount_one<std::uint32_t, std::uint16_t>(k, 0x0F0F)), 8u);
          }
          if (k.width == 4) {
            EXPECT_EQ((popcount_one<std::uint32_t, std::uint32_t>(k, 123)), 6u);
          }
          if (k.width == 8) {
            EXPECT_EQ((popcount_one<std::uint32_t, std::uint64_t>(k, 0x8000000000000001u)), 2u);
          }
          break;
        }
        if (k.width == 1) {
          EXPECT_EQ((popcount_one<std::uint8_t, std::uint8_t>(k, 0xFF)), 8);
        }
        if (k.width == 2) {
          EXPECT_EQ((popcount_one<std::uint8_t, std::uint16_t>(k, 0xFFFF)), 16);
        }
        if (k.width == 4) {
          EXPECT_EQ((popcount_one<std::uint8_t, std::uint32_t>(k, 789)), 5);
        }  // DirectML's example
        if (k.width == 8) {
          EXPECT_EQ((popcount_one<std::uint8_t, std::uint64_t>(k, ~std::uint64_t{0})), 64);
        }
        break;
      case OpKind::bit_and:
      case OpKind::bit_or:
        break;
    }
  }
  EXPECT_GE(checked, 32);  // at least the scalar set's unbroadcast kernels
}

TEST(CpuKernelsTest, NoElementsTouchNoMemory) {
  for (const KernelInfo& k : kernel_table())
    if (kernel_runnable(k)) k.fn(0, nullptr, nullptr, nullptr, KernelParams{});
}

// ---- The kernel table ----

// SIMD kernels are optional (an operator may have only its reference function), but an
// operator that has kernels has them at every instruction set, width and layout.
TEST(CpuKernelsTest, EveryInstructionSetCoversEveryOperationWithKernels) {
  int covered = 0;
  for (const OpInfo& op : op_table()) {
    const bool has_kernels =
        std::any_of(kernel_table().begin(), kernel_table().end(), [&](const KernelInfo& k) { return k.op == op.kind; });
    if (!has_kernels) continue;
    ++covered;
    for (const Isa isa : supported_isas()) {
      for (const unsigned width : kWidths) {
        for (const unsigned ow : out_widths(op.kind, width)) {
          for (const Operands o : kAllOperands) {
            const KernelInfo* k = lookup_kernel(op.kind, width, ow, isa, o);
            const std::string name = kernel_op_name(op.kind, ow);
            if (!is_binary(op.kind) && o != Operands::vectors) {
              EXPECT_EQ(k, nullptr) << name;
              continue;
            }
            ASSERT_NE(k, nullptr) << isa_name(isa) << " " << name << " x" << width * 8;
            EXPECT_EQ(k->isa, isa);
            EXPECT_TRUE(kernel_runnable(*k));
            EXPECT_EQ(select_kernel(op.kind, width, ow, isa, o), k);
          }
        }
      }
    }
  }
  EXPECT_GT(covered, 0);
}

TEST(CpuKernelsTest, NamesFollowTheConvention) {
  std::set<std::string> names;
  for (const KernelInfo& k : kernel_table())
    EXPECT_TRUE(names.insert(kernel_name(k)).second) << "duplicate " << kernel_name(k);
  for (const char* name : {"x8_and__scalar", "x8_and__avx2", "x32_shl__avx512", "x32_shl_c__avx2", "x16_shr_rc__avx2",
                           "x16_popcnt_u8__avx2", "x64_popcnt_u32__avx512", "x32_popcnt_u8__avx512vpopcntdq",
                           "x8_popcnt_u32__avx512bitalg", "x64_popcnt_u8__scalar_popcnt", "x16_not__scalar"})
    EXPECT_TRUE(names.count(name)) << name;
  // 8 operations x 4 widths: 5 binary with 3 layouts, 3 unary with 1 = 18 per width.
  EXPECT_EQ(std::count_if(kernel_table().begin(), kernel_table().end(),
                          [](const KernelInfo& k) { return k.isa == Isa::avx2; }),
            72);
}

TEST(CpuKernelsTest, SelectFallsBackToNarrowerSets) {
  // Asking for the host's best set always answers with a kernel of a set the host has.
  const KernelInfo& k = *select_kernel(OpKind::shl, 8, 8, host_isa(), Operands::a_scalar);
  EXPECT_LE(k.isa, host_isa());
  EXPECT_TRUE(kernel_runnable(k));
  if (!isa_supported(Isa::avx512)) {
    EXPECT_EQ(lookup_kernel(OpKind::bit_and, 4, 4, Isa::avx512, Operands::vectors), nullptr);
    EXPECT_EQ(select_kernel(OpKind::bit_and, 4, 4, Isa::avx512, Operands::vectors)->isa, host_isa());
  }
  // No kernel of a width the operator does not produce: the caller runs the reference.
  EXPECT_EQ(select_kernel(OpKind::bit_and, 4, 8, host_isa(), Operands::vectors), nullptr);
  const KernelInfo& p = *select_kernel(OpKind::popcount, 8, 1, Isa::scalar, Operands::vectors);
  EXPECT_EQ(p.extension, cpu_features().popcnt ? CpuExtension::popcnt : CpuExtension::none);
}

// The per-operation choice (kernel_choices): each row names, for every operand layout of its
// operation, a kernel that is compiled in and of a set no wider than the host set it is for;
// rows do not repeat; and dispatch takes the row's kernel wherever this CPU runs it, else the
// widest set's (select_kernel).
TEST(CpuKernelsTest, ChoicesNameKernelsThatExist) {
  std::set<std::string> keys;
  for (const KernelChoice& c : kernel_choices()) {
    const std::string op = kernel_op_name(c.op, c.out_width);
    EXPECT_TRUE(keys.insert(fmt::format("{} {} {}", op, c.width, isa_name(c.host))).second) << "repeated row " << op;
    for (const Operands o : kAllOperands) {
      if (!is_binary(c.op) && o != Operands::vectors) continue;
      const std::string suffix = o == Operands::b_scalar ? "_c" : o == Operands::a_scalar ? "_rc" : "";
      const std::string name = fmt::format("x{}_{}{}__{}", c.width * 8, op, suffix, c.tag);
      const auto k = std::find_if(kernel_table().begin(), kernel_table().end(),
                                  [&](const KernelInfo& x) { return kernel_name(x) == name; });
      ASSERT_NE(k, kernel_table().end()) << "the table names " << name << ", which does not exist";
      EXPECT_LE(k->isa, c.host) << name;
      EXPECT_EQ(k->op, c.op);
      EXPECT_EQ(k->out_width, c.out_width);
    }
  }
}

// The choice tables (kernel_table.cpp) pinned to the rule they replaced, re-implemented here
// as a walk of the kernel table: lookup_kernel is the last runnable row of exactly the set;
// select_kernel the lookup at the set, else at each narrower one; dispatch_kernel the first
// kChoices row for (op, widths, set) whose kernel (by tag, the last runnable such row) runs,
// else select_kernel. Every key, on every set (those this CPU lacks have no kernels of their
// own), compared by name and by address.
const KernelInfo* scan_lookup(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  const KernelInfo* found = nullptr;
  for (const KernelInfo& k : kernel_table())
    if (k.op == op && k.width == width && k.out_width == out_width && k.isa == isa && k.operands == operands &&
        kernel_runnable(k))
      found = &k;
  return found;
}
const KernelInfo* scan_select(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  for (int i = static_cast<int>(isa); i >= 0; --i)
    if (const KernelInfo* k = scan_lookup(op, width, out_width, static_cast<Isa>(i), operands)) return k;
  return nullptr;
}
const KernelInfo* scan_dispatch(OpKind op, unsigned width, unsigned out_width, Isa isa, Operands operands) {
  for (const KernelChoice& c : kernel_choices()) {
    if (c.op != op || c.width != width || c.out_width != out_width || c.host != isa) continue;
    const KernelInfo* found = nullptr;
    for (const KernelInfo& k : kernel_table())
      if (k.op == op && k.width == width && k.out_width == out_width && k.operands == operands &&
          std::string_view(k.tag) == c.tag && kernel_runnable(k))
        found = &k;
    if (found) return found;
  }
  return scan_select(op, width, out_width, isa, operands);
}

TEST(CpuKernelsTest, ChoiceTablesPickWhatTheScanPicked) {
  const auto name = [](const KernelInfo* k) { return k ? kernel_name(*k) : std::string("none"); };
  int keys = 0, kernels = 0, chosen_narrower = 0;
  for (const OpInfo& op : op_table())
    for (const unsigned width : kWidths)
      for (const unsigned out_width : kWidths)
        for (std::size_t i = 0; i < kIsaCount; ++i)
          for (const Operands operands : kAllOperands) {
            const Isa isa = static_cast<Isa>(i);
            const std::string key = fmt::format("{} x{} -> x{} {} {}", op.verb, width * 8, out_width * 8, isa_name(isa),
                                                static_cast<int>(operands));
            const KernelInfo* lookup = scan_lookup(op.kind, width, out_width, isa, operands);
            const KernelInfo* select = scan_select(op.kind, width, out_width, isa, operands);
            const KernelInfo* dispatch = scan_dispatch(op.kind, width, out_width, isa, operands);
            EXPECT_EQ(name(lookup_kernel(op.kind, width, out_width, isa, operands)), name(lookup)) << key;
            EXPECT_EQ(name(select_kernel(op.kind, width, out_width, isa, operands)), name(select)) << key;
            EXPECT_EQ(name(dispatch_kernel(op.kind, width, out_width, isa, operands)), name(dispatch)) << key;
            EXPECT_EQ(lookup_kernel(op.kind, width, out_width, isa, operands), lookup) << key;
            EXPECT_EQ(select_kernel(op.kind, width, out_width, isa, operands), select) << key;
            EXPECT_EQ(dispatch_kernel(op.kind, width, out_width, isa, operands), dispatch) << key;
            ++keys;
            kernels += dispatch != nullptr;
            chosen_narrower += dispatch != select;
          }
  EXPECT_EQ(keys, static_cast<int>(kOpCount * kWidths.size() * kWidths.size() * kIsaCount * kAllOperands.size()));
  EXPECT_GT(kernels, 0);
  // On a host whose widest set a kChoices row names, dispatch differs from select there.
  const bool a_row_applies = std::any_of(kernel_choices().begin(), kernel_choices().end(),
                                         [](const KernelChoice& c) { return isa_supported(c.host); });
  if (a_row_applies) {
    EXPECT_GT(chosen_narrower, 0);
  }
  // No kernel's key: no kernel, and no fault.
  EXPECT_EQ(select_kernel(OpKind::bit_and, 3, 3, Isa::scalar, Operands::vectors), nullptr);
  EXPECT_EQ(dispatch_kernel(OpKind::bit_and, 4, 16, Isa::scalar, Operands::vectors), nullptr);
  EXPECT_EQ(select_kernel(static_cast<OpKind>(kOpCount), 4, 4, Isa::scalar, Operands::vectors), nullptr);
  EXPECT_EQ(select_kernel(OpKind::bit_and, 4, 4, static_cast<Isa>(kIsaCount), Operands::vectors), nullptr);
  EXPECT_EQ(lookup_kernel(OpKind::bit_and, 4, 4, Isa::scalar, static_cast<Operands>(kOperandsCount)), nullptr);
}

// The tables have a slot for every key of every operator in the operator table, which is
// kOpCount rows long (ops.cpp): a new OpKind has its slots, and its kernels are found. (They were
// once memos sized by a hand-written operator count that a new operator would have overrun,
// silently going unremembered.)
TEST(CpuKernelsTest, ChoiceTablesHaveSlotsForEveryOperator) {
  static_assert(kKernelKeys == kOpCount * kKernelWidths * kKernelWidths * kOperandsCount);
  ASSERT_EQ(op_table().size(), kOpCount);
  EXPECT_EQ(op_table().back().kind, static_cast<OpKind>(kOpCount - 1));
  std::vector<int> used(kKernelKeys);
  for (const OpInfo& op : op_table())
    for (const unsigned width : kWidths)
      for (const unsigned out_width : kWidths)
        for (const Operands operands : kAllOperands) {
          const std::size_t key = kernel_key(op.kind, width, out_width, operands);
          ASSERT_LT(key, kKernelKeys) << op.verb;
          ++used[key];
        }
  EXPECT_EQ(std::count(used.begin(), used.end(), 1), static_cast<std::ptrdiff_t>(kKernelKeys)) << "one key per slot";
  EXPECT_EQ(kernel_key(static_cast<OpKind>(kOpCount), 4, 4, Operands::vectors), kKernelKeys);
  EXPECT_EQ(kernel_key(OpKind::bit_and, 0, 4, Operands::vectors), kKernelKeys);
  EXPECT_EQ(kernel_key(OpKind::bit_and, 4, 16, Operands::vectors), kKernelKeys);
  // Every runnable row is found at its own key and set, or a later row of the same key is.
  for (const KernelInfo& k : kernel_table()) {
    if (!kernel_runnable(k)) continue;
    const KernelInfo* found = lookup_kernel(k.op, k.width, k.out_width, k.isa, k.operands);
    ASSERT_NE(found, nullptr) << kernel_name(k);
    EXPECT_GE(found, &k) << kernel_name(k);
    EXPECT_EQ(kernel_key(found->op, found->width, found->out_width, found->operands),
              kernel_key(k.op, k.width, k.out_width, k.operands));
    EXPECT_EQ(found->isa, k.isa);
  }
}

TEST(CpuKernelsTest, DispatchFollowsTheChoices) {
  int checked = 0;
  for (const OpInfo& op : op_table()) {
    for (const Isa isa : supported_isas()) {
      for (const unsigned width : kWidths) {
        for (const unsigned ow : out_widths(op.kind, width)) {
          for (const Operands o : kAllOperands) {
            const KernelInfo* expect = select_kernel(op.kind, width, ow, isa, o);
            for (const KernelChoice& c : kernel_choices()) {
              if (c.op != op.kind || c.width != width || c.out_width != ow || c.host != isa) continue;
              const std::string suffix = o == Operands::b_scalar ? "_c" : o == Operands::a_scalar ? "_rc" : "";
              const std::string name =
                  fmt::format("x{}_{}{}__{}", width * 8, kernel_op_name(op.kind, ow), suffix, c.tag);
              for (const KernelInfo& k : kernel_table())
                if (kernel_name(k) == name && kernel_runnable(k)) expect = &k;
            }
            const KernelInfo* got = dispatch_kernel(op.kind, width, ow, isa, o);
            EXPECT_EQ(got, expect) << isa_name(isa) << " x" << width * 8 << " " << kernel_op_name(op.kind, ow)
                                   << ": dispatch picks " << (got ? kernel_name(*got) : "none");
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
}

// ---- Instruction sets ----

TEST(CpuIsaTest, NamesRoundTrip) {
  for (const Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) EXPECT_EQ(parse_isa(isa_name(isa)), isa);
  EXPECT_FALSE(parse_isa("AVX2"));
  EXPECT_FALSE(parse_isa("sse2"));
  EXPECT_FALSE(parse_isa(""));
  EXPECT_EQ(isa_names_help(), "scalar, avx2, avx512");
  EXPECT_EQ(isa_description(Isa::avx2), "AVX2");
  EXPECT_EQ(isa_description(Isa::avx512).rfind("AVX-512 (F, BW, VL", 0), 0u);
}

TEST(CpuIsaTest, SupportedSetsMatchTheFeatures) {
  const auto isas = supported_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::scalar);
  EXPECT_EQ(isas.back(), host_isa());
  EXPECT_TRUE(std::is_sorted(isas.begin(), isas.end()));
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(isa_supported(Isa::avx2), f.avx2);
  EXPECT_EQ(isa_supported(Isa::avx512), f.avx512f && f.avx512bw && f.avx512vl);
}

// cpu_features() reads glibc's table; libgcc's detection (cpuid, run again here) must agree on
// every feature the kernels depend on.
TEST(CpuIsaTest, FeaturesAgreeWithLibgcc) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(f.popcnt, __builtin_cpu_supports("popcnt") != 0);
  EXPECT_EQ(f.avx2, __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(f.avx512f, __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(f.avx512bw, __builtin_cpu_supports("avx512bw") != 0);
  EXPECT_EQ(f.avx512vl, __builtin_cpu_supports("avx512vl") != 0);
  EXPECT_EQ(f.avx512vpopcntdq, __builtin_cpu_supports("avx512vpopcntdq") != 0);
  EXPECT_EQ(f.avx512bitalg, __builtin_cpu_supports("avx512bitalg") != 0);
#else
  GTEST_SKIP() << "not an x86 CPU";
#endif
}

using IsaOverrideTest = test::IsaOverrideFixture;

Errc error_code_of(void (*f)()) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  return Errc::internal;
}

// DMLBITS_ISA is resolved with the request's options (check_backend_choice, prepare_request's
// one reader of it) and handed to the backend as its set; the CPU layer never reads it.
TEST_F(IsaOverrideTest, EnvironmentLowersTheSet) {
  const auto variable_set = [] { return check_backend_choice(test::kind("cpu"), "", "", std::nullopt).isa; };
  EXPECT_EQ(variable_set(), std::nullopt);
  ::setenv("DMLBITS_ISA", "scalar", 1);
  EXPECT_EQ(variable_set(), Isa::scalar);
  EXPECT_EQ(best_isa(), host_isa());  // (not read below the request)
  EXPECT_EQ(CpuBackend().isa(), host_isa());
  EXPECT_NE(device_text(make_backend(test::backend_request("cpu"))->device_description()).find("scalar"),
            std::string::npos);
  if (isa_supported(Isa::avx2)) {  // the option overrides the variable
    EXPECT_EQ(check_backend_choice(test::kind("cpu"), "avx2", "", std::nullopt).isa, Isa::avx2);
  }
  ::setenv("DMLBITS_ISA", "", 1);
  EXPECT_EQ(variable_set(), std::nullopt);
  ::setenv("DMLBITS_ISA", "sse9", 1);
  EXPECT_EQ(error_code_of([] { (void)check_backend_choice(test::kind("cpu"), "", "", std::nullopt); }), Errc::usage);
  if (!isa_supported(Isa::avx512)) {
    ::setenv("DMLBITS_ISA", "avx512", 1);
    EXPECT_EQ(error_code_of([] { (void)check_backend_choice(test::kind("cpu"), "", "", std::nullopt); }),
              Errc::unsupported);
    try {
      (void)variable_set();
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("DMLBITS_ISA: instruction set avx512 is not available", 0), 0u) << e.what();
    }
  }
}

// Without an override the backend follows the per-operation table; an override (DMLBITS_ISA,
// force_isa) or a set given to the constructor (--isa) runs that set's kernels only.
TEST_F(IsaOverrideTest, AnOverrideTurnsThePerOperationChoiceOff) {
  EXPECT_EQ(isa_override(), std::nullopt);
  EXPECT_TRUE(CpuBackend().per_operation_choice());
  EXPECT_EQ(CpuBackend().isa(), host_isa());
  EXPECT_FALSE(CpuBackend(host_isa()).per_operation_choice());
  EXPECT_EQ(
      device_text(make_backend(test::backend_request("cpu", std::string(isa_name(host_isa()))))->device_description())
          .find("per operation"),
      std::string::npos);
  ::setenv("DMLBITS_ISA", std::string(isa_name(host_isa())).c_str(), 1);
  EXPECT_EQ(isa_override(), std::nullopt);  // the variable is the request's: prepare_request resolves it
  EXPECT_EQ(device_text(make_backend(test::backend_request("cpu"))->device_description()).find("per operation"),
            std::string::npos);
  ::unsetenv("DMLBITS_ISA");
  force_isa(Isa::scalar);
  EXPECT_FALSE(CpuBackend().per_operation_choice());
  EXPECT_EQ(CpuBackend().isa(), Isa::scalar);
}

TEST_F(IsaOverrideTest, ForceLowersButNeverRaises) {
  force_isa(Isa::scalar);
  EXPECT_EQ(best_isa(), Isa::scalar);
  ::setenv("DMLBITS_ISA", "bogus", 1);  // the forced set wins; the variable is not read here
  EXPECT_EQ(best_isa(), Isa::scalar);
  force_isa(std::nullopt);
  ::unsetenv("DMLBITS_ISA");
  EXPECT_EQ(best_isa(), host_isa());
  if (!isa_supported(Isa::avx512)) {
    EXPECT_EQ(error_code_of([] { force_isa(Isa::avx512); }), Errc::unsupported);
    EXPECT_EQ(best_isa(), host_isa());
    EXPECT_EQ(error_code_of([] { CpuBackend b(Isa::avx512); }), Errc::unsupported);
  }
}

TEST_F(IsaOverrideTest, MakeBackendTakesTheIsaOption) {
  EXPECT_EQ(device_text(make_backend(test::backend_request("cpu"))->device_description()).find("CPU, "), 0u);
  const auto scalar = make_backend(test::backend_request("cpu", "scalar"));
  EXPECT_EQ(scalar->name(), "cpu");
  EXPECT_NE(device_text(scalar->device_description()).find("scalar"), std::string::npos)
      << device_text(scalar->device_description());
  if (isa_supported(Isa::avx2)) {
    EXPECT_NE(
        device_text(make_backend(test::backend_request("cpu", "avx2"))->device_description()).find("AVX2 kernels"),
        std::string::npos);
  }
  if (!isa_supported(Isa::avx512)) {
    EXPECT_EQ(error_code_of([] { (void)make_backend(test::backend_request("cpu", "avx512")); }), Errc::unsupported);
  }
  // make_backend's precondition (it checks nothing again): the options' rule refuses these.
  EXPECT_EQ(error_code_of([] { check_backend_choice(test::kind("cpu"), "neon", "", std::nullopt); }), Errc::usage);
  EXPECT_EQ(error_code_of([] { check_backend_choice(test::kind("cpu-reference"), "avx2", "", std::nullopt); }),
            Errc::usage);
  EXPECT_EQ(device_text(make_backend(test::backend_request("cpu-reference"))->device_description()),
            "CPU reference (scalar loops)");
  // Both CPU backends are offered by --backend (the list also has auto and d3d12).
  EXPECT_EQ(parse_backend("cpu"), BackendKind::cpu);
  EXPECT_EQ(parse_backend("cpu-reference"), BackendKind::cpu_reference);
  const auto kinds = backend_kinds();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), BackendKind::cpu), kinds.end());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), BackendKind::cpu_reference), kinds.end());
}

TEST(CpuBackendTest, DescribesItsKernelsAndThreads) {
  EXPECT_EQ(device_text(CpuBackend(Isa::scalar, {.threads = 2}).device_description()),
            "CPU, scalar" + std::string(cpu_features().popcnt ? " (POPCNT)" : "") + " kernels, 2 threads");
  EXPECT_EQ(device_text(CpuBackend(Isa::scalar, {.threads = 1}).device_description()).substr(0, 12), "CPU, scalar ");
  EXPECT_NE(device_text(CpuBackend(Isa::scalar, {.threads = 1}).device_description()).find(", 1 thread"),
            std::string::npos);
  if (isa_supported(Isa::avx2)) {
    EXPECT_EQ(device_text(CpuBackend(Isa::avx2, {.threads = 2}).device_description()), "CPU, AVX2 kernels, 2 threads");
  }
}

// ---- The backend on whole descriptors ----

struct Case {
  OpKind op;
  DType dtype;
  Shape a, b;  // b unused for unary ops
  std::optional<DType> out_dtype = std::nullopt;
  ShiftOverflow mode = ShiftOverflow::zero;
  bool in_place = false;
};

std::string describe(const Case& c) {
  std::string s =
      std::string(op_info(c.op).verb) + " " + std::string(dtype_info(c.dtype).dml_name) + " " + c.a.to_string();
  if (op_info(c.op).arity == 2) s += " with " + c.b.to_string();
  if (c.out_dtype) s += " -> " + std::string(dtype_info(*c.out_dtype).dml_name);
  if (op_info(c.op).shift) s += " " + std::string(shift_overflow_name(c.mode));
  if (c.in_place) s += " in place";
  return s;
}

// Runs `c` on `backend` and on the reference from the same random inputs; buffers start one
// byte past an aligned address, so nothing may assume alignment.
// The request of a case.
OpRequest request_of(const Case& c) {
  OpRequest r;
  r.op = c.op;
  r.inputs.push_back({c.dtype, c.a});
  if (op_info(c.op).arity == 2) r.inputs.push_back({c.dtype, c.b});
  r.out_dtype = c.out_dtype;
  r.shift_overflow = c.mode;
  r.in_place = c.in_place;
  return r;
}

void expect_backend_matches(Backend& backend, const Case& c, std::mt19937_64& rng) {
  SCOPED_TRACE(describe(c) + " on " + device_text(backend.device_description()));
  const OpRequest r = request_of(c);
  const ValidatedOp v = validate(r);
  const unsigned width = static_cast<unsigned>(dtype_info(c.dtype).size);
  const bool shift = c.op == OpKind::shl || c.op == OpKind::shr;
  std::vector<Bytes> inputs;
  for (std::size_t i = 0; i < r.inputs.size(); ++i)
    inputs.push_back(random_elements(r.inputs[i].shape.element_count(), width, shift && i == 1, rng));
  const std::size_t out_bytes = v.output_shape().element_count() * dtype_info(v.output_dtype()).size;

  auto run = [&](Backend& b, Bytes& storage) {
    std::vector<Bytes> in = inputs;
    for (auto& x : in) x.insert(x.begin(), std::byte{0});  // misalign by one byte
    ExecuteBuffers buffers;
    for (const auto& x : in) buffers.inputs.push_back({x.data() + 1, x.size() - 1});
    if (c.in_place) {
      buffers.output = {in[0].data() + 1, in[0].size() - 1};
      b.run(v, buffers);
      storage.assign(in[0].begin() + 1, in[0].end());
    } else {
      storage.assign(out_bytes + 1, std::byte{0x5A});
      buffers.output = {storage.data() + 1, out_bytes};
      b.run(v, buffers);
      storage.erase(storage.begin());
    }
  };
  Bytes expect, got;
  CpuReferenceBackend reference;
  run(reference, expect);
  run(backend, got);
  ASSERT_EQ(got.size(), expect.size());
  EXPECT_TRUE(got == expect) << "result differs from the reference";
}

std::vector<Case> backend_cases() {
  std::vector<Case> cases;
  const std::vector<std::pair<Shape, Shape>> shapes{
      {Shape{2, 1, 5}, Shape{3, 5}},
      {Shape{3, 5}, Shape{2, 1, 5}},
      {Shape{4, 1}, Shape{1, 3}},
      {Shape{}, Shape{7}},
      {Shape{7}, Shape{}},
      {Shape{3, 1}, Shape{}},
      {Shape{2, 3, 4}, Shape{4}},
      {Shape{2, 3, 4}, Shape{3, 1}},
      {Shape{5, 1, 3}, Shape{1, 4, 1}},
      {Shape{2, 0, 3}, Shape{3}},
      {Shape{1, 1, 1}, Shape{1}},
      {Shape{}, Shape{}},
      {Shape{100, 37}, Shape{37}},
      {Shape{33, 2}, Shape{33, 1}},
      {Shape{1000}, Shape{1000}},
      {Shape{2, 3, 1, 65}, Shape{2, 1, 7, 65}},
  };
  for (const auto& op : op_table()) {
    for (const DType dt : {DType::uint8, DType::uint16, DType::uint32, DType::uint64}) {
      for (const auto& [a, b] : shapes) {
        if (op.arity == 1) {
          if (op.kind == OpKind::popcount) {
            cases.push_back({op.kind, dt, a, {}, DType::uint8});
            cases.push_back({op.kind, dt, a, {}, DType::uint32});
          } else {
            cases.push_back({op.kind, dt, a, {}});
            cases.push_back({op.kind, dt, a, {}, std::nullopt, ShiftOverflow::zero, true});
          }
          continue;
        }
        cases.push_back({op.kind, dt, a, b});
        if (op.kind == OpKind::shl || op.kind == OpKind::shr) {
          cases.push_back({op.kind, dt, a, b, std::nullopt, ShiftOverflow::wrap});
          cases.push_back({op.kind, dt, a, b, std::nullopt, ShiftOverflow::directml});
        }
        if (broadcast_shapes(a, b) == a) cases.push_back({op.kind, dt, a, b, std::nullopt, ShiftOverflow::zero, true});
      }
    }
  }
  // Dtypes other than unsigned: the kernels see only bits.
  cases.push_back({OpKind::bit_xor, DType::float32, Shape{3, 17}, Shape{17}});
  cases.push_back({OpKind::bit_and, DType::int8, Shape{}, Shape{40}});
  cases.push_back({OpKind::popcount, DType::float64, Shape{9, 9}, {}, DType::uint32});
  cases.push_back({OpKind::bit_not, DType::float16, Shape{2, 50}, {}});
  return cases;
}

TEST(CpuBackendTest, MatchesReferenceOnBroadcastDescriptors) {
  std::mt19937_64 rng(42);
  const auto cases = backend_cases();
  for (const Isa isa : supported_isas()) {
    CpuBackend backend(isa, {.threads = 1});
    for (const Case& c : cases) expect_backend_matches(backend, c, rng);
  }
}

// A prepared run (a kept plan's: the layout plan and kernel chosen once) computes what run()
// does, on every case's descriptors and every set, called again on new memory; the reference
// backend is the oracle, as above. Buffers start one byte past an aligned address.
TEST(CpuBackendTest, PreparedRunsMatchTheReference) {
  std::mt19937_64 rng(11);
  CpuReferenceBackend reference;
  for (const Isa isa : supported_isas()) {
    const CpuBackend backend(isa, {.threads = 1});
    for (const Case& c : backend_cases()) {
      if (c.in_place) continue;  // (plans are never in place)
      SCOPED_TRACE(describe(c) + " on " + std::string(isa_name(isa)));
      const OpRequest r = request_of(c);
      const ValidatedOp v = validate(r);
      const std::unique_ptr<PreparedRun> prepared = backend.prepare_run(v);
      const std::uint64_t n = v.output_shape().element_count();
      if (n == 0) {
        EXPECT_EQ(prepared, nullptr);  // nothing to run: run() returns at once
        continue;
      }
      ASSERT_NE(prepared, nullptr);  // every operator has kernels for validate()'s layouts
      const unsigned width = static_cast<unsigned>(dtype_info(c.dtype).size);
      const std::size_t out_bytes = n * dtype_info(v.output_dtype()).size;
      for (int call = 0; call < 2; ++call) {
        std::vector<Bytes> in;
        for (std::size_t i = 0; i < r.inputs.size(); ++i) {
          in.push_back(random_elements(r.inputs[i].shape.element_count(), width, op_info(c.op).shift && i == 1, rng));
          in.back().insert(in.back().begin(), std::byte{0});
        }
        ExecuteBuffers buffers;
        std::vector<const std::byte*> pointers;
        for (const auto& x : in) {
          buffers.inputs.push_back({x.data() + 1, x.size() - 1});
          pointers.push_back(x.data() + 1);
        }
        Bytes expect(out_bytes, std::byte{0x5A}), got(out_bytes + 1, std::byte{0x5A});
        buffers.output = expect;
        reference.run(v, buffers);
        prepared->run(pointers, got.data() + 1);
        EXPECT_TRUE(std::equal(expect.begin(), expect.end(), got.begin() + 1)) << "call " << call;
      }
    }
  }
}

// Where run() would take threads for the size (or has nothing to run), no prepared run: the
// caller keeps run(), whose lease shares the process's threads.
TEST(CpuBackendTest, PreparesOnlyRunsOnTheCallingThread) {
  OpRequest r;
  r.op = OpKind::bit_xor;
  r.inputs = {{DType::uint32, Shape{64}}, {DType::uint32, Shape{64}}};
  const ValidatedOp small = validate(r);
  EXPECT_NE(CpuBackend(std::nullopt, {.threads = 2}).prepare_run(small), nullptr);
  EXPECT_EQ(CpuBackend(std::nullopt, {.threads = 2, .parallel_min_bytes = 1}).prepare_run(small), nullptr);
  EXPECT_NE(CpuBackend(std::nullopt, {.threads = 1, .parallel_min_bytes = 1}).prepare_run(small), nullptr);
  r.inputs = {{DType::uint32, Shape{kParallelMinBytes / 4}}, {DType::uint32, Shape{}}};  // 4 MiB of output
  EXPECT_EQ(CpuBackend(std::nullopt, {.threads = 2}).prepare_run(validate(r)), nullptr);
  r.inputs = {{DType::uint32, Shape{0, 4}}, {DType::uint32, Shape{4}}};
  EXPECT_EQ(CpuBackend().prepare_run(validate(r)), nullptr);
}

TEST(CpuBackendTest, SplitsWorkAcrossThreads) {
  // A threshold of 1 byte splits every tensor, however small, including splits inside an inner
  // run and runs shorter than the split alignment.
  std::mt19937_64 rng(7);
  for (const Isa isa : supported_isas()) {
    for (const unsigned threads : {2u, 3u}) {
      CpuBackend backend(isa, {.threads = threads, .parallel_min_bytes = 1});
      for (const Case& c : backend_cases()) expect_backend_matches(backend, c, rng);
    }
  }
}

TEST(CpuBackendTest, LargeTensorsUseTheDefaultThreshold) {
  // 4 MiB and more of output: split across the default threads.
  std::mt19937_64 rng(9);
  CpuBackend backend;
  expect_backend_matches(backend, {OpKind::bit_xor, DType::uint8, Shape{4, (1u << 20) + 13}, Shape{(1u << 20) + 13}},
                         rng);
  expect_backend_matches(backend, {OpKind::shl, DType::uint32, Shape{(1u << 20) + 3}, Shape{}}, rng);
  expect_backend_matches(backend, {OpKind::popcount, DType::uint64, Shape{3, 1, (1u << 19) + 1}, {}, DType::uint8},
                         rng);
}

TEST(CpuBackendTest, EmptyOperationsWriteNothing) {
  OpRequest r;
  r.op = OpKind::bit_and;
  r.inputs = {{DType::uint32, Shape{0, 4}}, {DType::uint32, Shape{4}}};
  const ValidatedOp v = validate(r);
  const Bytes b(16, std::byte{1});
  ExecuteBuffers buffers;
  buffers.inputs = {std::span<const std::byte>(), b};
  CpuBackend().run(v, buffers);  // nothing to read or write, not even A's (empty) buffer
}

TEST(CpuBackendTest, RefusesBuffersShorterThanTheDescriptors) {
  OpRequest r;
  r.op = OpKind::bit_or;
  r.inputs = {{DType::uint16, Shape{8}}, {DType::uint16, Shape{8}}};
  const ValidatedOp v = validate(r);
  Bytes a(16), b(14), out(16);
  ExecuteBuffers buffers;
  buffers.inputs = {a, b};
  buffers.output = out;
  try {
    CpuBackend().run(v, buffers);
    FAIL() << "ran with a short input";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal);
    EXPECT_NE(std::string(e.what()).find("input 1 has 14 bytes, its descriptor reads 16"), std::string::npos)
        << e.what();
  }
}

// ---- Thread count ----

// Restores DMLBITS_THREADS after a test.
class CpuThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("DMLBITS_THREADS")) saved_ = v;
    ::unsetenv("DMLBITS_THREADS");
  }
  void TearDown() override {
    if (saved_) ::setenv("DMLBITS_THREADS", saved_->c_str(), 1);
    else ::unsetenv("DMLBITS_THREADS");
  }
  std::optional<std::string> saved_;
};

TEST_F(CpuThreadsTest, ARequestWinsOverTheEnvironment) {
  ::setenv("DMLBITS_THREADS", "bogus", 1);  // not read when a count is asked for
  EXPECT_EQ(cpu_threads(1), 1u);
  EXPECT_EQ(cpu_threads(7), 7u);
  EXPECT_EQ(CpuBackend(Isa::scalar, {.threads = 3}).threads(), 3u);
  EXPECT_EQ(check_backend_choice(test::kind("cpu"), "", "", 4u).threads, 4u);
}

// DMLBITS_THREADS is resolved with the request's options (check_backend_choice, prepare_request's
// one reader of it); the CPU backend and cpu_threads() take the count and never read it.
TEST_F(CpuThreadsTest, TheDefaultIsTwoWhereTheMachineHasTwo) {
  const unsigned machine = std::thread::hardware_concurrency() >= 2 ? 2u : 1u;
  const auto variable_count = [] { return check_backend_choice(test::kind("cpu"), "", "", std::nullopt).threads; };
  EXPECT_EQ(cpu_threads(0), machine);
  EXPECT_EQ(variable_count(), 0u);
  ::setenv("DMLBITS_THREADS", "", 1);  // empty is unset
  EXPECT_EQ(variable_count(), 0u);
  ::setenv("DMLBITS_THREADS", "5", 1);
  EXPECT_EQ(variable_count(), 5u);
  EXPECT_EQ(cpu_threads(0), machine);  // not read below the request
  EXPECT_EQ(CpuBackend(Isa::scalar).threads(), machine);
  EXPECT_EQ(CpuBackend(Isa::scalar, {.threads = variable_count()}).threads(), 5u);
  ::setenv("DMLBITS_THREADS", "256", 1);
  EXPECT_EQ(variable_count(), 256u);
}

TEST_F(CpuThreadsTest, BadEnvironmentValuesAreUsageErrors) {
  for (const char* bad : {"0", "257", "-1", "2x", " 2", "two", "99999999999"}) {
    ::setenv("DMLBITS_THREADS", bad, 1);
    try {
      (void)check_backend_choice(test::kind("cpu"), "", "", std::nullopt);
      ADD_FAILURE() << "DMLBITS_THREADS=" << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::usage) << bad;
      EXPECT_EQ(std::string(e.what()),
                "DMLBITS_THREADS: '" + std::string(bad) + "' is not a thread count from 1 to 256");
    }
  }
}

}  // namespace
}  // namespace dmlbits
