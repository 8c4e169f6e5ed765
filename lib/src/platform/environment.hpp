// The process's environment. Reading is safe from any thread as long as nothing writes it, and
// nothing does once threads run: set_environment_default() is for start-up only. dmlbits'
// own configuration travels in options (the prepared request), never through the
// environment; these functions serve the variables users set for dmlbits (DMLBITS_THREADS,
// DMLBITS_ISA, DMLBITS_VKD3D_LIBRARY) and those of libraries it loads (vkd3d's).
#pragma once

#include <optional>
#include <string>

namespace dmlbits {

// The value of `name`, or nullopt when it is not set (an empty value is returned as "").
std::optional<std::string> environment_variable(const std::string& name);

// Sets `name` to `value` unless it is already set (to anything, even ""), for the libraries
// this process loads later to read. Not safe while another thread may read the environment:
// call it before any thread starts (glibc's getenv does not lock against setenv).
void set_environment_default(const std::string& name, const std::string& value);

}  // namespace dmlbits
