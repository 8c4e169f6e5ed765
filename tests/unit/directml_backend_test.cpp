// The directml backend's decisions that need no DirectML (directml_backend.hpp,
// directml_internal.hpp): what it refuses whatever DirectML says, and, outside Windows, the stub
// that says it is not built. Runs with DirectML itself are in tests/directml (Windows build).
#include <gtest/gtest.h>

#include <string>

#include "../../lib/src/directml/directml_internal.hpp"  // the layer's own refusals
#include "directml_backend.hpp"
#include "dmlbits/backend.hpp"
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
      const auto why = directml::unsupported_reason(op(k, mode));
      ASSERT_TRUE(why.has_value());
      EXPECT_NE(why->find("--shift-overflow directml"), std::string::npos) << *why;
      EXPECT_NE(why->find(std::string(shift_overflow_name(mode))), std::string::npos) << *why;
    }
  }
  for (OpKind k : {OpKind::bit_and, OpKind::bit_or, OpKind::bit_xor, OpKind::bit_not, OpKind::popcount})
    EXPECT_FALSE(directml::unsupported_reason(op(k)).has_value()) << op_info(k).verb;
}

TEST(DirectmlBackendTest, OutsideWindowsItIsListedButNotBuilt) {
  if (directml_built()) GTEST_SKIP() << "a Windows build: tests/directml runs the backend";
  const Error e = test::error_of([] { (void)make_backend("directml"); });
  EXPECT_EQ(e.code(), Errc::backend);
  EXPECT_NE(std::string(e.what()).find("not built: Windows only"), std::string::npos) << e.what();
  const DirectmlInfo info = probe_directml();
  EXPECT_FALSE(info.built);
  EXPECT_FALSE(info.found);
  EXPECT_NE(info.error.find("Windows only"), std::string::npos);
}

}  // namespace
}  // namespace dmlbits
