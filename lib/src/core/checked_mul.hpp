// Overflow-checked arithmetic on element counts and byte sizes (shapes, DirectML descriptions).
#pragma once

#include <cstdint>

namespace dmlbits {

// a * b, or throws Errc::invalid_input with `what` in the message.
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* what);

}  // namespace dmlbits
