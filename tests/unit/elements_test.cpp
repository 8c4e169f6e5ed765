// run_elements (dmlbits/elements.hpp): every operator, input and output type of the newest tier
// and operand layout, short runs and one long enough to be split over threads, in place where
// allowed, against each operator's reference function (the specification every kernel is tested
// against), element by element.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "dmlbits/elements.hpp"

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

void check(const OpInfo& op, DType in, DType out, std::size_t n, ElementLayout layout, bool in_place) {
  const std::size_t is = dtype_info(in).size, os = dtype_info(out).size;
  const bool binary = op.arity == 2;
  const std::size_t na = layout == ElementLayout::a_scalar ? 1 : n;
  const std::size_t nb = layout == ElementLayout::b_scalar ? 1 : n;
  std::vector<std::byte> a = random_bytes(std::max<std::size_t>(na, 1) * is, 1);
  std::vector<std::byte> b = random_bytes(std::max<std::size_t>(nb, 1) * is, 2);
  if (op.shift) small_counts(b, is);
  const std::vector<std::byte> a0 = a;
  std::vector<std::byte> result(std::max<std::size_t>(n, 1) * os, std::byte{0x5A});
  void* target = in_place ? static_cast<void*>(a.data()) : result.data();
  run_elements(op.kind, in, out, n, a.data(), binary ? b.data() : nullptr, target, layout);
  const std::vector<std::byte>& got = in_place ? a : result;
  const std::string what = fmt::format("{} {}->{} n={} layout={} in_place={}", op.verb, dtype_info(in).numpy_name,
                                       dtype_info(out).numpy_name, n, static_cast<int>(layout), in_place);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = load(a0, na == 1 ? 0 : i, is), y = binary ? load(b, nb == 1 ? 0 : i, is) : 0;
    const std::uint64_t want = op.reference(x, y, dtype_info(in).bits(), kDefaultShiftOverflow);
    const std::uint64_t mask = os == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (os * 8)) - 1;
    if (load(got, i, os) != (want & mask)) {
      ADD_FAILURE() << what << ": element " << i << " is " << load(got, i, os) << ", not " << (want & mask);
      return;
    }
  }
  if (!in_place && n == 0) {
    EXPECT_EQ(result[0], std::byte{0x5A}) << what << ": n = 0 wrote";
  }
}

TEST(ElementsTest, EveryOperatorTypeAndLayoutAgainstTheReference) {
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
      for (DType out : outs) {
        for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{1000}}) {
          check(op, in.dtype, out, n, ElementLayout::vectors, false);
          if (op.arity == 2) {
            check(op, in.dtype, out, n, ElementLayout::b_scalar, false);
            check(op, in.dtype, out, n, ElementLayout::a_scalar, false);
          }
          if (op.allows_in_place() && out == in.dtype) check(op, in.dtype, out, n, ElementLayout::vectors, true);
        }
      }
    }
  }
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

}  // namespace
}  // namespace dmlbits
