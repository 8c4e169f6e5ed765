// libFuzzer entry point: feature level, dtype, operator, instruction set and format names against
// their tables.
// The logic lives in targets.hpp (names_target), shared with tests/unit/fuzz_regression_test.cpp.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dmlbits::fuzz::run_guarded(dmlbits::fuzz::names_target, data, size);
}
