// The platform layer's CPU features (cpu_features.hpp): the operating system's report agrees
// with the compiler's own cpuid-based detection, and the extensions imply one another as the
// instruction sets do.
#include <gtest/gtest.h>

#include "cpu_features.hpp"

namespace dmlbits {
namespace {

TEST(CpuFeaturesTest, AgreesWithTheCompilersDetection) {
  const X86Features f = detect_x86_features();
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  EXPECT_EQ(f.popcnt, static_cast<bool>(__builtin_cpu_supports("popcnt")));
  EXPECT_EQ(f.avx2, static_cast<bool>(__builtin_cpu_supports("avx2")));
  EXPECT_EQ(f.avx512f, static_cast<bool>(__builtin_cpu_supports("avx512f")));
  EXPECT_EQ(f.avx512bw, static_cast<bool>(__builtin_cpu_supports("avx512bw")));
  EXPECT_EQ(f.avx512vl, static_cast<bool>(__builtin_cpu_supports("avx512vl")));
#endif
  if (f.avx512bw || f.avx512vl || f.avx512vpopcntdq || f.avx512bitalg) {
    EXPECT_TRUE(f.avx512f);
  }
}

TEST(CpuFeaturesTest, IsTheSameAtEveryCall) {
  const X86Features a = detect_x86_features(), b = detect_x86_features();
  EXPECT_EQ(a.popcnt, b.popcnt);
  EXPECT_EQ(a.avx2, b.avx2);
  EXPECT_EQ(a.avx512f, b.avx512f);
  EXPECT_EQ(a.avx512vpopcntdq, b.avx512vpopcntdq);
  EXPECT_EQ(a.avx512bitalg, b.avx512bitalg);
}

// The maker from our one cpuid agrees with libgcc's own reading of it (a different path: its
// constructor's table).
TEST(CpuFeaturesTest, VendorAgreesWithTheCompilersDetection) {
  const X86Vendor vendor = detect_x86_vendor();
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  EXPECT_EQ(vendor == X86Vendor::intel, static_cast<bool>(__builtin_cpu_is("intel")));
  EXPECT_EQ(vendor == X86Vendor::amd, static_cast<bool>(__builtin_cpu_is("amd")));
#else
  EXPECT_EQ(vendor, X86Vendor::other);
#endif
  EXPECT_EQ(detect_x86_vendor(), vendor);
}

}  // namespace
}  // namespace dmlbits
