// Shared by the directml layer's files (never included outside lib/src/directml).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "validate.hpp"

namespace dmlbits::directml {

// Why the directml backend does not run `op` whatever DirectML says (directml_common.cpp); a
// shift under another rule than DirectML's is the option's fault, thrown as an OptionError
// (Errc::unsupported, with the "VERB: the directml backend cannot run this" context) for each face
// to word.
std::optional<std::string> unsupported_reason(const ValidatedOp& op);

inline constexpr std::uint64_t kDefaultMaxBufferBytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t kMinBufferBytes = 4096;
inline constexpr std::uint64_t kMaxBufferBytes = std::uint64_t{1} << 30;
// The largest buffer the backend creates: `requested` if not 0, else
// DMLBITS_DIRECTML_MAX_BUFFER_BYTES if set and not empty (kMinBufferBytes..kMaxBufferBytes, else
// Errc::usage), else kDefaultMaxBufferBytes.
std::uint64_t max_buffer_bytes(std::uint64_t requested);

}  // namespace dmlbits::directml
