// What the application needs to know of, and do with, its standard streams without calling the
// operating system itself (the platform layer does: lib/src/platform/standard_streams.cpp).
#pragma once

#include <cstddef>
#include <string_view>
#include <system_error>

namespace dmlbits {

// Whether standard output or standard error is a terminal: binary .npy is not written to one,
// and a progress line is shown only on one.
bool standard_output_is_terminal() noexcept;
bool standard_error_is_terminal() noexcept;

// Writes all of `data` to standard output, retrying interrupted writes, and returns the first
// failure (empty on success): a reader that closed its pipe compares equal to
// std::errc::broken_pipe; anything else is an I/O error whose message() says why. Bypasses
// the C and C++ libraries' buffers, so that the failure's reason is not lost.
std::error_code write_standard_output(std::string_view data) noexcept;

}  // namespace dmlbits
