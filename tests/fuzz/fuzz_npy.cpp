// libFuzzer entry point: read_npy / inspect_npy / parse_npy_header on arbitrary bytes; a read file
// must write back and read back unchanged.
// The logic lives in targets.hpp (npy_target), shared with tests/unit/fuzz_regression_test.cpp.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dmlbits::fuzz::run_guarded(dmlbits::fuzz::npy_target, data, size);
}
