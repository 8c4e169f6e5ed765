// The POSIX implementation of environment.hpp.
#include "environment.hpp"

#include <cstdlib>

namespace dmlbits {

std::optional<std::string> environment_variable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

void set_environment_default(const std::string& name, const std::string& value) {
  ::setenv(name.c_str(), value.c_str(), 0);
}

}  // namespace dmlbits
