// Instruction sets (dmlbits/cpu_isa.hpp): what require_isa and force_isa refuse and say, what
// the descriptions name, and that the override is process-wide until removed. Detection itself
// and DMLBITS_ISA (which prepare_request resolves) are checked against libgcc in
// cpu_backend_test.cpp (IsaOverrideTest, CpuIsaTest), beside the kernels that use them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "cpu_isa.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/request.hpp"
#include "make_backend.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

using CpuIsaOverride = test::IsaOverrideFixture;

TEST(IsaNamesTest, OrderAndNames) {
  EXPECT_LT(Isa::scalar, Isa::avx2);
  EXPECT_LT(Isa::avx2, Isa::avx512);
  EXPECT_EQ(kIsaCount, 3u);
  EXPECT_EQ(isa_name(Isa::scalar), "scalar");
  EXPECT_EQ(isa_name(Isa::avx512), "avx512");
  for (const char* bad : {"Scalar", "avx-512", "avx512f", " avx2", "avx2 "}) EXPECT_FALSE(parse_isa(bad)) << bad;
}

TEST(IsaSupportTest, ScalarRunsEverywhereAndSupportIsANarrowerSet) {
  EXPECT_TRUE(isa_supported(Isa::scalar));
  EXPECT_EQ(require_isa(Isa::scalar), Isa::scalar);
  EXPECT_TRUE(isa_supported(host_isa()));
  // A set is supported exactly when it is no wider than the host's.
  for (const Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) EXPECT_EQ(isa_supported(isa), isa <= host_isa());
  // avx512 needs all three of F, BW and VL.
  const CpuFeatures& f = cpu_features();
  if (f.avx512f && !(f.avx512bw && f.avx512vl)) {
    EXPECT_FALSE(isa_supported(Isa::avx512));
  }
}

TEST(IsaSupportTest, RequireNamesTheSetAndTheBestAvailable) {
  if (isa_supported(Isa::avx512)) GTEST_SKIP() << "this CPU runs every set";
  try {
    require_isa(Isa::avx512);
    ADD_FAILURE() << "avx512 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::unsupported);
    const std::string expected = "instruction set avx512 is not available on this CPU (it runs " +
                                 std::string(isa_name(host_isa())) + ": " + isa_description(host_isa()) + ")";
    EXPECT_EQ(std::string(e.what()), expected);
  }
}

TEST(IsaDescriptionTest, NamesTheExtensionsInUse) {
  EXPECT_EQ(isa_description(Isa::scalar), cpu_features().popcnt ? "scalar (POPCNT)" : "scalar");
  // The optional extensions are listed only when the CPU runs avx512 at all.
  const std::string avx512 = isa_description(Isa::avx512);
  if (!isa_supported(Isa::avx512)) {
    EXPECT_EQ(avx512, "AVX-512 (F, BW, VL)");
  } else {
    EXPECT_EQ(avx512.find("VPOPCNTDQ") != std::string::npos, cpu_features().avx512vpopcntdq);
    EXPECT_EQ(avx512.find("BITALG") != std::string::npos, cpu_features().avx512bitalg);
  }
}

TEST_F(CpuIsaOverride, ForcedSetStaysUntilRemoved) {
  force_isa(Isa::scalar);
  EXPECT_EQ(best_isa(), Isa::scalar);
  EXPECT_EQ(best_isa(), Isa::scalar);  // not a one-shot
  force_isa(host_isa());
  EXPECT_EQ(best_isa(), host_isa());
  force_isa(std::nullopt);
  ::setenv("DMLBITS_ISA", "scalar", 1);
  EXPECT_EQ(best_isa(), host_isa());  // the variable is the request's (prepare_request), never read here
}

TEST_F(CpuIsaOverride, ARefusedForceKeepsThePreviousSet) {
  if (isa_supported(Isa::avx512)) GTEST_SKIP() << "this CPU runs every set";
  force_isa(Isa::scalar);
  EXPECT_THROW(force_isa(Isa::avx512), Error);
  EXPECT_EQ(best_isa(), Isa::scalar);
}

TEST_F(CpuIsaOverride, UnknownEnvironmentValuesNameTheVariable) {
  ::setenv("DMLBITS_ISA", "sse2", 1);
  try {
    (void)check_backend_choice(BackendKind::cpu, "", "", std::nullopt);  // (prepare_request's reader)
    ADD_FAILURE() << "sse2 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::usage);
    EXPECT_EQ(std::string(e.what()), "DMLBITS_ISA: unknown instruction set 'sse2' (known: scalar, avx2, avx512)");
  }
}

}  // namespace
}  // namespace dmlbits
