// The POSIX implementation of environment.hpp.
#include "environment.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;  // POSIX: declared by no header unless asked (_GNU_SOURCE's unistd.h)

namespace dmlbits {

std::optional<std::string> environment_variable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

bool environment_has(std::span<const std::string_view> names, std::span<const std::optional<std::string>> values) {
  // Up to a few names (the callers' two) on the stack: a check made on every call allocates nothing.
  constexpr std::size_t kOnStack = 4;
  std::array<const char*, kOnStack> small{};
  std::vector<const char*> large;
  if (names.size() > kOnStack) large.resize(names.size());
  const std::span<const char*> found =
      names.size() > kOnStack ? std::span<const char*>(large) : std::span<const char*>(small.data(), names.size());
  find_in_environment_block(environ, names, found);
  for (std::size_t i = 0; i < names.size(); ++i)
    if (found[i] ? !values[i] || std::strcmp(found[i], values[i]->c_str()) != 0 : values[i].has_value()) return false;
  return true;
}

void set_environment_default(const std::string& name, const std::string& value) {
  ::setenv(name.c_str(), value.c_str(), 0);
}

}  // namespace dmlbits
