// libFuzzer entry point: JSON tensor documents (first byte: fallback dtype); every tensor read
// must round-trip through write_json_tensor bit for bit.
// The logic lives in targets.hpp (json_tensor_target), shared with tests/unit/fuzz_regression_test.cpp.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dmlbits::fuzz::run_guarded(dmlbits::fuzz::json_tensor_target, data, size);
}
