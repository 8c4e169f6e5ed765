// Sizes in bytes as people read them, for messages and listings: one formatter, so that every
// message says "64 MiB" the same way.
#pragma once

#include <cstdint>
#include <string>

namespace dmlbits {

// "0 bytes", "1 byte", "1023 bytes", "1 KiB", "64 MiB", "10 GiB": a whole number of the largest
// binary unit that fits. Otherwise one decimal, followed by the exact count when
// `with_exact_count` (so that 64 MiB and one byte is not "64 MiB"): "1.5 KiB (1536 bytes)";
// without it, "7.8 GiB" (for quantities such as a device's memory, where the bytes are noise).
std::string format_byte_size(std::uint64_t bytes, bool with_exact_count = true);

}  // namespace dmlbits
