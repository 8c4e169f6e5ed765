// The platform layer's environment (environment.hpp): reading variables, and defaults that
// never override a value the user set.
#include <gtest/gtest.h>

#include <cstdlib>

#include "environment.hpp"

namespace dmlbits {
namespace {

TEST(EnvironmentTest, ReadsSetEmptyAndMissingVariables) {
  ::setenv("DMLBITS_ENVIRONMENT_TEST", "value", 1);
  EXPECT_EQ(environment_variable("DMLBITS_ENVIRONMENT_TEST"), "value");
  ::setenv("DMLBITS_ENVIRONMENT_TEST", "", 1);
  EXPECT_EQ(environment_variable("DMLBITS_ENVIRONMENT_TEST"), "");  // set, to nothing
  ::unsetenv("DMLBITS_ENVIRONMENT_TEST");
  EXPECT_EQ(environment_variable("DMLBITS_ENVIRONMENT_TEST"), std::nullopt);
}

TEST(EnvironmentTest, DefaultsLeaveUsersValuesAlone) {
  ::unsetenv("DMLBITS_ENVIRONMENT_DEFAULT");
  set_environment_default("DMLBITS_ENVIRONMENT_DEFAULT", "first");
  EXPECT_EQ(environment_variable("DMLBITS_ENVIRONMENT_DEFAULT"), "first");
  set_environment_default("DMLBITS_ENVIRONMENT_DEFAULT", "second");
  EXPECT_EQ(environment_variable("DMLBITS_ENVIRONMENT_DEFAULT"), "first");
  ::setenv("DMLBITS_ENVIRONMENT_DEFAULT", "", 1);
  set_environment_default("DMLBITS_ENVIRONMENT_DEFAULT", "third");
  EXPECT_EQ(environment_variable("DMLBITS_ENVIRONMENT_DEFAULT"), "");
  ::unsetenv("DMLBITS_ENVIRONMENT_DEFAULT");
}

TEST(EnvironmentTest, Vkd3dIsQuietUnlessAskedBeforeMain) {
  // d3d12_runtime.cpp sets these defaults during static initialisation, before any thread.
#if defined(DMLBITS_HAVE_D3D12)
  EXPECT_TRUE(environment_variable("VKD3D_DEBUG").has_value());
  EXPECT_TRUE(environment_variable("VKD3D_SHADER_DEBUG").has_value());
#else
  GTEST_SKIP() << "the D3D12 backend is not built";
#endif
}

}  // namespace
}  // namespace dmlbits
