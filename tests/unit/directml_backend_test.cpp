// The directml backend's decisions that need no DirectML (directml_backend.hpp,
// directml_internal.hpp): what it refuses whatever DirectML says, and, outside Windows, the stub
// that says it is not built. Runs with DirectML itself are in tests/directml (Windows build).
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "../../lib/src/directml/directml_internal.hpp"  // the layer's own refusals
#include "directml_backend.hpp"
#include "backend.hpp"
#include "make_backend.hpp"
#include "dmlbits/error.hpp"
#include "unit_support.hpp"

namespace dmlbits {
namespace {

ValidatedOp op(OpKind kind, ShiftOverflow mode = ShiftOverflow::zero) {
  OpRequest r;
  r.op = kind;
  r.inputs.assign(static_cast<std::size_t>(op_info(kind).arity), {DType::uint32, {4}});
  r.shift_overflow = mode;
  return validate(r);
}

TEST(DirectmlBackendTest, RefusesShiftsOutsideDirectmlsOwnOverflowRule) {
  for (OpKind k : {OpKind::shl, OpKind::shr}) {
    for (ShiftOverflow mode : {ShiftOverflow::zero, ShiftOverflow::wrap}) {
      // The option's fault, worded by each face: an OptionError, Errc::unsupported as before.
      const OptionError e = test::error_of<OptionError>([&] { (void)directml::unsupported_reason(op(k, mode)); });
      EXPECT_EQ(e.code(), Errc::unsupported);
      EXPECT_EQ(e.key(), OptionKey::shift_overflow);
      EXPECT_EQ(e.value(), shift_overflow_name(mode));
      EXPECT_EQ(e.choices(), std::vector<std::string>{"directml"});
      EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
    }
  }
  for (OpKind k : {OpKind::bit_and, OpKind::bit_or, OpKind::bit_xor, OpKind::bit_not, OpKind::popcount})
    EXPECT_FALSE(directml::unsupported_reason(op(k)).has_value()) << op_info(k).verb;
}

TEST(DirectmlBackendTest, TakesItsBufferSizeFromTheEnvironment) {
  const char* saved = std::getenv("DMLBITS_DIRECTML_MAX_BUFFER_BYTES");
  const std::string old = saved ? saved : "";
  ::unsetenv("DMLBITS_DIRECTML_MAX_BUFFER_BYTES");
  EXPECT_EQ(directml::max_buffer_bytes(0), std::uint64_t{256} << 20);
  EXPECT_EQ(directml::max_buffer_bytes(8192), 8192u);
  ::setenv("DMLBITS_DIRECTML_MAX_BUFFER_BYTES", "65536", 1);
  EXPECT_EQ(directml::max_buffer_bytes(0), 65536u);
  EXPECT_EQ(directml::max_buffer_bytes(8192), 8192u);  // the caller's choice wins
  for (const char* bad : {"4095", "0x1000", "1073741825", "64k", "-1"}) {
    ::setenv("DMLBITS_DIRECTML_MAX_BUFFER_BYTES", bad, 1);
    const Error e = test::error_of([] { (void)directml::max_buffer_bytes(0); });
    EXPECT_EQ(e.code(), Errc::usage) << bad;
    EXPECT_NE(std::string(e.what()).find("from 4096 to 1073741824"), std::string::npos) << e.what();
  }
  if (saved) ::setenv("DMLBITS_DIRECTML_MAX_BUFFER_BYTES", old.c_str(), 1);
  else ::unsetenv("DMLBITS_DIRECTML_MAX_BUFFER_BYTES");
}

TEST(DirectmlBackendTest, OutsideWindowsItIsListedButNotBuilt) {
  if (directml_built()) GTEST_SKIP() << "a Windows build: tests/directml runs the backend";
  const Error e = test::error_of([] { (void)make_backend(test::backend_request("directml")); });
  EXPECT_EQ(e.code(), Errc::backend);
  EXPECT_NE(std::string(e.what()).find("not built: Windows only"), std::string::npos) << e.what();
  const DirectmlInfo info = probe_directml();
  EXPECT_FALSE(info.built);
  EXPECT_FALSE(info.found);
  EXPECT_NE(info.error.find("Windows only"), std::string::npos);
}

}  // namespace
}  // namespace dmlbits
