// auto_rule.hpp: `--backend auto`'s choice between the CPU backend and a D3D12 adapter, by
// estimated cost, over described adapters (an H100-like discrete GPU, an integrated one,
// lavapipe) and sizes. Expected times are worked by hand from the model in auto_rule.hpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "auto_rule.hpp"
#include "dmlbits/timing.hpp"
#include "d3d12_backend.hpp"

namespace dmlbits {
namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

const AutoAdapter kH100{0, "NVIDIA H100 80GB HBM3", false, false};
const AutoAdapter kIntegrated{1, "AMD Radeon 780M", false, true};
const AutoAdapter kLavapipe{0, "llvmpipe (LLVM 15.0.6, 256 bits)", true, false};

// An `and` of two inputs of `bytes` each.
AutoWork and_of(std::uint64_t bytes, unsigned threads) { return AutoWork{2 * bytes, bytes, threads}; }

TEST(AutoRuleTest, ADiscreteGpuLosesToTheCpuAtEverySize) {
  // 1 GiB `and` (3 GiB moved = 3,221,225,472 bytes), 2 threads at 16 GB/s each:
  //   cpu   3.2212e9 / 32e9                                  = 0.1007 s
  //   d3d12 0.03 + 3.2212e9/16e9 + 3.2212e9/25e9 + 3.2212e9/1e12 = 0.03 + 0.2013 + 0.1288 + 0.0032 = 0.3634 s
  const AutoEstimate d = decide_auto(kH100, and_of(kGiB, 2));
  EXPECT_FALSE(d.gpu);
  EXPECT_NEAR(d.cpu_seconds, 0.1007, 0.0001);
  EXPECT_NEAR(d.gpu_seconds, 0.3634, 0.0001);
  EXPECT_EQ(
      auto_estimate_text(d),
      "adapter 0 (NVIDIA H100 80GB HBM3) is discrete: estimated 0.363 s on d3d12 (every byte copied into and out of "
      "its heaps by one thread, and over the bus, the device's creation) against 0.101 s on the CPU backend's 2 "
      "threads; named as the backend, d3d12 uses it anyway");
  // One thread: the copies alone (0.2013 s) equal the CPU backend's whole run.
  const AutoEstimate one = decide_auto(kH100, and_of(kGiB, 1));
  EXPECT_FALSE(one.gpu);
  EXPECT_NEAR(one.cpu_seconds, 0.2013, 0.0001);
  EXPECT_NE(auto_estimate_text(one).find("the CPU backend's 1 thread;"), std::string::npos) << auto_estimate_text(one);
  for (std::uint64_t bytes : {std::uint64_t{0}, 16 * kMiB, 256 * kMiB, kGiB, 16 * kGiB})
    for (unsigned threads : {1u, 2u, 16u, 256u}) {
      EXPECT_FALSE(decide_auto(kH100, and_of(bytes, threads)).gpu) << bytes << " bytes, " << threads << " threads";
      EXPECT_FALSE(decide_auto(kH100, AutoWork{bytes, bytes, threads}).gpu) << "not, " << bytes;
    }
}

TEST(AutoRuleTest, AUmaGpuStillPaysForTheCopies) {
  // 1 GiB `and` on one thread: d3d12 = 0.03 + 0.2013 (copies) + 3.2212e9/100e9 (0.0322), no bus = 0.2635 s.
  const AutoEstimate d = decide_auto(kIntegrated, and_of(kGiB, 1));
  EXPECT_FALSE(d.gpu);
  EXPECT_NEAR(d.gpu_seconds, 0.2635, 0.0001);
  EXPECT_NE(auto_estimate_text(d).find(
                "is UMA: estimated 0.264 s on d3d12 (every byte copied into and out of its heaps by one "
                "thread, the device's creation) against 0.201 s"),
            std::string::npos)
      << auto_estimate_text(d);
  for (std::uint64_t bytes : {16 * kMiB, 256 * kMiB, kGiB})
    for (unsigned threads : {1u, 2u, 16u}) EXPECT_FALSE(decide_auto(kIntegrated, and_of(bytes, threads)).gpu);
}

TEST(AutoRuleTest, ASoftwareAdapterIsNeverTaken) {
  AutoRates fast;
  fast.copy_bytes_per_s = std::numeric_limits<double>::infinity();
  fast.device_seconds = 0;
  const AutoEstimate d = decide_auto(kLavapipe, and_of(kGiB, 1), fast);
  EXPECT_FALSE(d.gpu);
  EXPECT_EQ(d.gpu_seconds, 0.0);
  EXPECT_EQ(auto_estimate_text(d),
            "adapter 0 (llvmpipe (LLVM 15.0.6, 256 bits)) is software, slower than the CPU backend; named as the "
            "backend, d3d12 uses "
            "it anyway");
}

TEST(AutoRuleTest, TheGpuWinsWhereItsPathIsCheaper) {
  // A d3d12 path without the copies (copy rate infinite) and a 400 GB/s UMA GPU, 1 GiB `and`:
  //   d3d12 0.03 + 3.2212e9/400e9 = 0.0381 s against the CPU's 0.2013 s on one thread.
  AutoRates no_copies;
  no_copies.copy_bytes_per_s = std::numeric_limits<double>::infinity();
  no_copies.uma_bytes_per_s = 400e9;
  const AutoEstimate uma = decide_auto(kIntegrated, and_of(kGiB, 1), no_copies);
  EXPECT_TRUE(uma.gpu);
  EXPECT_NEAR(uma.gpu_seconds, 0.0381, 0.0001);
  EXPECT_EQ(auto_estimate_text(uma).find("; named as the backend, d3d12 uses it anyway"), std::string::npos)
      << auto_estimate_text(uma);
  // Discrete, no copies: 0.03 + 0.1288 (bus) + 0.0032 = 0.1620 s: faster than one thread (0.2013 s),
  // slower than two (0.1007 s).
  EXPECT_TRUE(decide_auto(kH100, and_of(kGiB, 1), no_copies).gpu);
  EXPECT_FALSE(decide_auto(kH100, and_of(kGiB, 2), no_copies).gpu);
  // A small run: the device's creation (0.03 s) outweighs 3 MiB on the CPU (0.0002 s).
  EXPECT_FALSE(decide_auto(kIntegrated, and_of(kMiB, 1), no_copies).gpu);
}

TEST(AutoRuleTest, AnEnumeratedAdapterIsUmaWhenVulkanCallsItIntegrated) {
  GpuAdapter a;
  a.index = 3;
  a.name = "Intel(R) UHD Graphics 770";
  a.type = "integrated";
  AutoAdapter d = auto_adapter_description(a);
  EXPECT_EQ(d.index, 3u);
  EXPECT_EQ(d.name, "Intel(R) UHD Graphics 770");
  EXPECT_TRUE(d.uma);
  EXPECT_FALSE(d.software);
  a.type = "discrete";
  EXPECT_FALSE(auto_adapter_description(a).uma);
  a.type = "";  // DXGI: unknown, counted as discrete (the bus paid)
  EXPECT_FALSE(auto_adapter_description(a).uma);
  a.type = "cpu";
  a.software = true;
  EXPECT_TRUE(auto_adapter_description(a).software);
}

}  // namespace
}  // namespace dmlbits
