// format_byte_size (dmlbits/error.hpp) for a size that a message says is below a bound.
#pragma once

#include <cstdint>
#include <string>

namespace dmlbits {

// `bytes` as format_byte_size(bytes, false) words it, unless its rounding would make it read as
// `bound` or above (16 MiB less a byte is "16.0 MiB"): then in exact bytes ("16777215 bytes"),
// so that "the output (...) is below 16 MiB" never reads as its own contradiction.
std::string format_byte_size_below(std::uint64_t bytes, std::uint64_t bound);

}  // namespace dmlbits
