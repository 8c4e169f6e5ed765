// ElementKernel and run_elements (dmlbits/elements.hpp): every operator, input and output type of
// the newest tier and operand layout, short runs around the vector widths, unaligned, and one
// long enough to be split over threads, in place where allowed, on every instruction set this
// CPU runs, against each operator's reference function (the specification every kernel is tested
// against), element by element.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "cpu_isa.hpp"
#include "dmlbits/elements.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

std::uint64_t load(const std::vector<std::byte>& v, std::size_t i, std::size_t size) {
  std::uint64_t x = 0;
  std::memcpy(&x, v.data() + i * size, size);
  return x;
}

std::vector<std::byte> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> v(n);
  for (auto& b : v) b = static_cast<std::byte>(rng());
  return v;
}

// Shift counts: below the width, and past it, where DirectML's rule applies.
void small_counts(std::vector<std::byte>& v, std::size_t size) {
  for (std::size_t i = 0; i < v.size() / size; ++i) {
    const std::uint64_t c = load(v, i, size) % (size * 8 * 2 + 3);
    std::memcpy(v.data() + i * size, &c, size);
  }
}

// Runs (op, in, out, layout) over n elements through `kernel`, or run_elements where null, with
// each operand `offset` bytes past an aligned allocation, and compares every element with the
// reference's; out's bytes past the n elements must be left as they were.
void check(const OpInfo& op, DType in, DType out, std::size_t n, ElementLayout layout, bool in_place,
           const ElementKernel* kernel = nullptr, std::size_t offset = 0) {
  const std::size_t is = dtype_info(in).size, os = dtype_info(out).size;
  const bool binary = op.arity == 2;
  const std::size_t na = layout == ElementLayout::a_scalar ? 1 : n;
  const std::size_t nb = layout == ElementLayout::b_scalar ? 1 : n;
  std::vector<std::byte> a = random_bytes(std::max<std::size_t>(na, 1) * is + offset + 8, 1);
  std::vector<std::byte> b = random_bytes(std::max<std::size_t>(nb, 1) * is + offset, 2);
  std::vector<std::byte> b_counts(b.begin() + static_cast<std::ptrdiff_t>(offset), b.end());
  if (op.shift) small_counts(b_counts, is);
  std::copy(b_counts.begin(), b_counts.end(), b.begin() + static_cast<std::ptrdiff_t>(offset));
  const std::vector<std::byte> a0(a.begin() + static_cast<std::ptrdiff_t>(offset), a.end());
  std::vector<std::byte> result(std::max<std::size_t>(n, 1) * os + offset + 8, std::byte{0x5A});
  void* target = in_place ? static_cast<void*>(a.data() + offset) : result.data() + offset;
  const void* pb = binary ? b.data() + offset : nullptr;
  if (kernel != nullptr) kernel->run(n, a.data() + offset, pb, target);
  else run_elements(op.kind, in, out, n, a.data() + offset, pb, target, layout);
  const std::vector<std::byte> got(static_cast<const std::byte*>(target),
                                   static_cast<const std::byte*>(target) + std::max<std::size_t>(n, 1) * os + 8);
  const std::string what =
      fmt::format("{} {}->{} n={} layout={} in_place={} offset={} kernel {}", op.verb, dtype_info(in).numpy_name,
                  dtype_info(out).numpy_name, n, static_cast<int>(layout), in_place, offset,
                  kernel != nullptr ? kernel->kernel_name() : "of run_elements");
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = load(a0, na == 1 ? 0 : i, is), y = binary ? load(b_counts, nb == 1 ? 0 : i, is) : 0;
    const std::uint64_t want = op.reference(x, y, dtype_info(in).bits(), kDefaultShiftOverflow);
    const std::uint64_t mask = os == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (os * 8)) - 1;
    if (load(got, i, os) != (want & mask)) {
      ADD_FAILURE() << what << ": element " << i << " is " << load(got, i, os) << ", not " << (want & mask);
      return;
    }
  }
  // Past the run: untouched (the guard bytes, or a's own bytes in place).
  const std::vector<std::byte> after(got.begin() + static_cast<std::ptrdiff_t>(n * os), got.end());
  const std::vector<std::byte>& before = in_place ? a0 : std::vector<std::byte>(result.size(), std::byte{0x5A});
  for (std::size_t k = 0; k < after.size() && n * os + k < before.size(); ++k) {
    if (after[k] != before[n * os + k]) {
      ADD_FAILURE() << what << ": byte " << k << " past the run was written";
      return;
    }
  }
}

// Each (operator, input, output) of the newest tier: fn(op, in, out).
template <typename F>
void for_each_signature(F fn) {
  for (const OpInfo& op : op_table()) {
    const OpTier& tier = op.tiers.back();
    for (const DTypeInfo& in : dtype_table()) {
      if (!tier.inputs.contains(in.dtype)) continue;
      std::vector<DType> outs{in.dtype};
      if (!tier.outputs.empty()) {
        outs.clear();
        for (const DTypeInfo& o : dtype_table())
          if (tier.outputs.contains(o.dtype)) outs.push_back(o.dtype);
      }
      for (DType out : outs) fn(op, in.dtype, out);
    }
  }
}

TEST(ElementsTest, EveryOperatorTypeAndLayoutAgainstTheReference) {
  for_each_signature([](const OpInfo& op, DType in, DType out) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
      check(op, in, out, n, ElementLayout::vectors, false);
      if (op.arity == 2) {
        check(op, in, out, n, ElementLayout::b_scalar, false);
        check(op, in, out, n, ElementLayout::a_scalar, false);
      }
      if (op.allows_in_place() && out == in) check(op, in, out, n, ElementLayout::vectors, true);
    }
  });
}

// 6 MiB of uint32 output: past the 4 MiB from which the thread rule splits a run (on a machine of
// one CPU it runs whole, which the same comparison checks).
TEST(ElementsTest, LongRunsSplitOverThreads) {
  const std::size_t n = (std::size_t{6} << 20) / 4 + 13;
  check(op_info(OpKind::bit_xor), DType::uint32, DType::uint32, n, ElementLayout::vectors, false);
  check(op_info(OpKind::shl), DType::uint32, DType::uint32, n, ElementLayout::b_scalar, false);
  check(op_info(OpKind::bit_or), DType::uint32, DType::uint32, n, ElementLayout::vectors, true);
  check(op_info(OpKind::popcount), DType::uint32, DType::uint8, n, ElementLayout::vectors, false);
}

using ElementKernelTest = test::IsaOverrideFixture;

// A kernel made once and run many times: every signature and layout, at sizes around the
// vector widths (16, 32 and 64 bytes: the SIMD loops' tails and the kernels' unrolled blocks),
// unaligned by 1 and 3 bytes, in place where allowed, without an override (the per-operation
// table) and with each set this CPU runs forced.
TEST_F(ElementKernelTest, EverySetSignatureLayoutSizeAndAlignmentAgainstTheReference) {
  std::vector<std::optional<Isa>> overrides{std::nullopt};
  for (Isa isa : supported_isas()) overrides.push_back(isa);
  for (const std::optional<Isa>& isa : overrides) {
    force_isa(isa);
    for_each_signature([&](const OpInfo& op, DType in, DType out) {
      std::vector<ElementLayout> layouts{ElementLayout::vectors};
      if (op.arity == 2) layouts.insert(layouts.end(), {ElementLayout::b_scalar, ElementLayout::a_scalar});
      for (ElementLayout layout : layouts) {
        const ElementKernel kernel(op.kind, in, out, layout);
        const bool in_place = op.allows_in_place() && out == in && layout != ElementLayout::a_scalar;
        for (std::size_t n : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 1000}) {
          for (std::size_t offset : {0, 1, 3}) {
            check(op, in, out, n, layout, false, &kernel, offset);
            if (in_place) check(op, in, out, n, layout, true, &kernel, offset);
          }
        }
      }
    });
  }
}

// The choice is made when the kernel is: best_isa()'s set then, whatever force_isa() says later.
TEST_F(ElementKernelTest, TheKernelIsChosenWhenMade) {
  const ElementKernel host(OpKind::bit_or, DType::uint32, DType::uint32);
  const std::string host_name = host.kernel_name();
  EXPECT_EQ(host_name.rfind("x32_or__", 0), 0u) << host_name;
  force_isa(Isa::scalar);
  EXPECT_EQ(host.kernel_name(), host_name);
  EXPECT_EQ(ElementKernel(OpKind::bit_or, DType::uint32, DType::uint32).kernel_name(), "x32_or__scalar");
  EXPECT_EQ(ElementKernel(OpKind::shl, DType::uint16, DType::uint16, ElementLayout::b_scalar).kernel_name(),
            "x16_shl_c__scalar");
  force_isa(std::nullopt);
  std::vector<std::uint32_t> a{1, 2, 4, 8}, b{16, 32, 64, 128}, out(4);
  host.run(4, a.data(), b.data(), out.data());
  EXPECT_EQ(out, (std::vector<std::uint32_t>{17, 34, 68, 136}));
  host.run(4, a.data(), b.data(), a.data());  // in place
  EXPECT_EQ(a, (std::vector<std::uint32_t>{17, 34, 68, 136}));
}

// Past kParallelMinBytes a kept kernel splits the run over threads as run_elements does.
TEST_F(ElementKernelTest, LongRunsSplitOverThreads) {
  const std::size_t n = (std::size_t{6} << 20) / 4 + 13;
  const ElementKernel or_kernel(OpKind::bit_or, DType::uint32, DType::uint32);
  check(op_info(OpKind::bit_or), DType::uint32, DType::uint32, n, ElementLayout::vectors, true, &or_kernel, 1);
  const ElementKernel shr_kernel(OpKind::shr, DType::uint64, DType::uint64, ElementLayout::a_scalar);
  check(op_info(OpKind::shr), DType::uint64, DType::uint64, n / 2, ElementLayout::a_scalar, false, &shr_kernel);
}

}  // namespace
}  // namespace dmlbits
