// environment.hpp's reading of an environ-style block, on every system (the POSIX environment is
// one; tests make their own).
#include <algorithm>
#include <cstring>

#include "environment.hpp"

namespace dmlbits {

void find_in_environment_block(const char* const* block, std::span<const std::string_view> names,
                               std::span<const char*> values) {
  std::fill(values.begin(), values.end(), nullptr);
  std::size_t missing = names.size();
  for (; missing > 0 && block && *block; ++block) {
    const char* entry = *block;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string_view name = names[i];
      // The first entry of a name is its value (getenv's), so a name found is not looked for again.
      if (values[i] || std::strncmp(entry, name.data(), name.size()) != 0 || entry[name.size()] != '=') continue;
      values[i] = entry + name.size() + 1;
      --missing;
      break;
    }
  }
}

}  // namespace dmlbits
