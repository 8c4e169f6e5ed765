// The platform layer's dynamic loading (dynamic_library.hpp): a library that loads, one that
// does not (with the loader's reason), and symbols found or not.
#include <gtest/gtest.h>

#include <string>

#include "dynamic_library.hpp"

namespace dmlbits {
namespace {

TEST(DynamicLibraryTest, LoadsALibraryAndFindsItsFunctions) {
  const DynamicLibrary libm = DynamicLibrary::open("libm.so.6");
  ASSERT_TRUE(libm.loaded()) << libm.error();
  EXPECT_TRUE(libm.error().empty());
  const auto cbrt = libm.function<double (*)(double)>("cbrt");
  ASSERT_NE(cbrt, nullptr);
  EXPECT_DOUBLE_EQ(cbrt(27.0), 3.0);
  EXPECT_EQ(libm.symbol("dmlbits_no_such_symbol"), nullptr);
}

TEST(DynamicLibraryTest, SaysWhyALibraryDoesNotLoad) {
  const DynamicLibrary missing = DynamicLibrary::open("/nonexistent/libvkd3d-utils.so.1");
  EXPECT_FALSE(missing.loaded());
  EXPECT_EQ(missing.error(),
            "/nonexistent/libvkd3d-utils.so.1: cannot open shared object file: No such file or directory");
  EXPECT_EQ(missing.symbol("D3D12CreateDevice"), nullptr);
  const DynamicLibrary none;
  EXPECT_FALSE(none.loaded());
  EXPECT_TRUE(none.error().empty());
}

}  // namespace
}  // namespace dmlbits
