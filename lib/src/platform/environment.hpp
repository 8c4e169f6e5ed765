// The process's environment. Reading is safe from any thread as long as nothing writes it, and
// nothing does once threads run: set_environment_default() is for start-up only. dmlbits'
// own configuration travels in options (the prepared request), never through the
// environment; these functions serve the variables users set for dmlbits (DMLBITS_THREADS,
// DMLBITS_ISA, DMLBITS_VKD3D_LIBRARY) and those of libraries it loads (vkd3d's).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace dmlbits {

// The value of `name`, or nullopt when it is not set (an empty value is returned as "").
std::optional<std::string> environment_variable(const std::string& name);

// Whether each variable of `names` has now the value of the same place in `values` (nullopt:
// not set; "" is set, to nothing), the environment read in one pass for all of them and each
// value compared where it lies: for a caller that checks on every call that the variables it
// acted on still say the same (a kept plan's DMLBITS_ISA and DMLBITS_THREADS), at less than a
// getenv and a std::string per name. `names` and `values` have the same size.
bool environment_has(std::span<const std::string_view> names, std::span<const std::optional<std::string>> values);

// The values of `names` in `block` (entries "NAME=value" ending with a null pointer, as POSIX's
// environ): values[i] points at the value of the first entry named names[i] (the one getenv
// finds), nullptr where there is none. One pass over the block; nothing is copied, so the
// pointers are valid as long as the block's strings. `values` has the size of `names`; a name
// contains no '=' (an empty one is found nowhere); every entry has two bytes at least (its
// first two are read at once, as glibc's getenv reads them).
void find_in_environment_block(const char* const* block, std::span<const std::string_view> names,
                               std::span<const char*> values);

// Sets `name` to `value` unless it is already set (to anything, even ""), for the libraries
// this process loads later to read. Not safe while another thread may read the environment:
// call it before any thread starts (glibc's getenv does not lock against setenv).
void set_environment_default(const std::string& name, const std::string& value);

}  // namespace dmlbits
