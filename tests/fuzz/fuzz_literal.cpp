// libFuzzer entry point: command-line scalar literals for every dtype and classify_operand;
// printed values must read back.
// The logic lives in targets.hpp (literal_target), shared with tests/unit/fuzz_regression_test.cpp.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dmlbits::fuzz::run_guarded(dmlbits::fuzz::literal_target, data, size);
}
