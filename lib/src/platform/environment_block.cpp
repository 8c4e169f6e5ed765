// environment.hpp's reading of an environ-style block, on every system (the POSIX environment is
// one; tests make their own).
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "environment.hpp"

namespace dmlbits {

namespace {

// The first two bytes of an entry as one number, read as one load as glibc's getenv reads them
// (an entry is "NAME=value": two bytes at least). Two bytes tell almost every entry from the
// names looked for.
std::uint16_t head(const char* s) {
  std::uint16_t h;
  std::memcpy(&h, s, sizeof h);
  return h;
}

// The pass for up to N names (N a constant, so that the test of an entry against every name's
// head is unrolled: with a loop over the names, the pass cost 1.5 times two getenv calls).
template <std::size_t N>
void find_in_block(const char* const* block, std::span<const std::string_view> names, std::span<const char*> values) {
  // The names' heads, kept on the stack (read from `names` in the loop, they were reloaded for
  // every entry: a store into `values` may alias them for the compiler); a place past the names
  // repeats the first name's, so that it adds no match.
  std::array<std::uint16_t, N> heads{};
  for (std::size_t i = 0; i < N; ++i) {
    const std::string_view name = names[i < names.size() ? i : 0];
    const std::array<char, 2> bytes{name.empty() ? '=' : name[0], name.size() < 2 ? '=' : name[1]};
    std::memcpy(&heads[i], bytes.data(), sizeof heads[i]);
  }
  std::size_t missing = names.size();
  for (; *block; ++block) {
    const char* entry = *block;
    const std::uint16_t h = head(entry);
    bool any = false;
    for (std::size_t i = 0; i < N; ++i) any |= h == heads[i];
    if (!any) continue;
    for (std::size_t i = 0; i < names.size(); ++i) {
      // The first entry of a name is its value (getenv's): a name found is not taken again.
      const std::string_view name = names[i];
      if (h != heads[i] || values[i] || name.empty()) continue;
      std::size_t k = std::min<std::size_t>(name.size(), 2);
      while (k < name.size() && entry[k] == name[k]) ++k;  // stops at the entry's end: names hold no '\0'
      if (k < name.size() || entry[k] != '=') continue;
      values[i] = entry + k + 1;
      if (--missing == 0) return;
      break;
    }
  }
}

}  // namespace

void find_in_environment_block(const char* const* block, std::span<const std::string_view> names,
                               std::span<const char*> values) {
  std::fill(values.begin(), values.end(), nullptr);
  if (!block || names.empty()) return;
  if (names.size() <= 2) return find_in_block<2>(block, names, values);
  constexpr std::size_t kHeads = 8;
  if (names.size() <= kHeads) return find_in_block<kHeads>(block, names, values);
  // (No caller has so many: a pass per group of kHeads.)
  find_in_environment_block(block, names.first(kHeads), values.first(kHeads));
  find_in_environment_block(block, names.subspan(kHeads), values.subspan(kHeads));
}

}  // namespace dmlbits
