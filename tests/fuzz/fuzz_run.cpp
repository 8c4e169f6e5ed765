// libFuzzer entry point: whole operations from operand files in every layout to output files,
// streamed and in memory, against the oracle (run_target in targets.hpp).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return dmlbits::fuzz::run_guarded(dmlbits::fuzz::run_target, data, size);
}
