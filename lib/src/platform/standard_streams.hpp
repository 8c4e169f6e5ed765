// What the library itself needs to know of the standard streams (the front ends' part is
// dmlbits/front_end.hpp); standard_streams.cpp and standard_streams_win32.cpp implement both.
#pragma once

namespace dmlbits {

// Whether standard output is a terminal: binary .npy is not written to one.
bool standard_output_is_terminal() noexcept;

}  // namespace dmlbits
