// The platform layer's environment (environment.hpp): reading variables, and defaults that
// never override a value the user set.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

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

// One pass finds each name's first entry (the one getenv takes), whole names only: a name that
// is a prefix of another entry's, or an entry's value that looks like a name, is not it.
TEST(EnvironmentTest, FindsEachNamesFirstEntryInABlock) {
  const char* const block[] = {"DMLBITS_ISAX=wrong", "DMLBITS_IS=wrong",   "PATH=DMLBITS_ISA=wrong", "DMLBITS_THREADS=",
                               "DMLBITS_ISA=avx2",   "DMLBITS_ISA=scalar", "DMLBITS_THREADS=3",      nullptr};
  const std::array<std::string_view, 3> names{"DMLBITS_ISA", "DMLBITS_THREADS", "DMLBITS_MISSING"};
  std::array<const char*, 3> values{"stale", "stale", "stale"};
  find_in_environment_block(block, names, values);
  ASSERT_NE(values[0], nullptr);
  EXPECT_STREQ(values[0], "avx2");
  EXPECT_EQ(values[0], block[4] + 12);  // in place: nothing copied
  ASSERT_NE(values[1], nullptr);
  EXPECT_STREQ(values[1], "");  // set, to nothing
  EXPECT_EQ(values[2], nullptr);

  // One-letter names, whose second byte is the '=', and a name of nothing, which names none.
  const char* const short_names[] = {"AB=2", "A=1", "=x", "==y", nullptr};
  const std::array<std::string_view, 3> letters{"B", "A", ""};
  values = {"stale", "stale", "stale"};
  find_in_environment_block(short_names, letters, values);
  EXPECT_EQ(values[0], nullptr);
  ASSERT_NE(values[1], nullptr);
  EXPECT_STREQ(values[1], "1");
  EXPECT_EQ(values[2], nullptr);

  const char* const empty[] = {nullptr};
  values = {"stale", "stale", "stale"};
  find_in_environment_block(empty, names, values);
  EXPECT_EQ(values, (std::array<const char*, 3>{nullptr, nullptr, nullptr}));
}

// environment_has() against the process's environment as setenv leaves it: set, set to
// nothing, unset, and a value that only starts like the one compared.
TEST(EnvironmentTest, ComparesTheVariablesInPlace) {
  ::setenv("DMLBITS_ENVIRONMENT_A", "avx2", 1);
  ::unsetenv("DMLBITS_ENVIRONMENT_B");
  const std::array<std::string_view, 2> names{"DMLBITS_ENVIRONMENT_A", "DMLBITS_ENVIRONMENT_B"};
  using Values = std::array<std::optional<std::string>, 2>;
  EXPECT_TRUE(environment_has(names, Values{"avx2", std::nullopt}));
  EXPECT_FALSE(environment_has(names, Values{"avx", std::nullopt}));
  EXPECT_FALSE(environment_has(names, Values{"avx2x", std::nullopt}));
  EXPECT_FALSE(environment_has(names, Values{std::nullopt, std::nullopt}));
  EXPECT_FALSE(environment_has(names, Values{"avx2", ""}));
  ::setenv("DMLBITS_ENVIRONMENT_B", "", 1);
  EXPECT_TRUE(environment_has(names, Values{"avx2", ""}));
  EXPECT_FALSE(environment_has(names, Values{"avx2", std::nullopt}));
  ::setenv("DMLBITS_ENVIRONMENT_B", "4", 1);
  EXPECT_TRUE(environment_has(names, Values{"avx2", "4"}));
  EXPECT_FALSE(environment_has(names, Values{"avx2", ""}));
  ::unsetenv("DMLBITS_ENVIRONMENT_A");
  ::unsetenv("DMLBITS_ENVIRONMENT_B");
  EXPECT_TRUE(environment_has(names, Values{std::nullopt, std::nullopt}));
  EXPECT_FALSE(environment_has(names, Values{"avx2", std::nullopt}));
  EXPECT_TRUE(environment_has({}, {}));
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
