// libFuzzer entry point: expression text (`dmlbits eval`, manifests, Python's evaluate) through
// the parser, its graph's invariants and the canonical text's round trip.
// The logic lives in targets.hpp (expression_target), shared with tests/unit/fuzz_regression_test.cpp.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dmlbits::fuzz::run_guarded(dmlbits::fuzz::expression_target, data, size);
}
