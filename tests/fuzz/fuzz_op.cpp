// libFuzzer entry point: whole operations: validate(), then every backend and instruction set byte
// for byte against the reference.
// The logic lives in targets.hpp (op_target), shared with tests/unit/fuzz_regression_test.cpp.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dmlbits::fuzz::run_guarded(dmlbits::fuzz::op_target, data, size);
}
