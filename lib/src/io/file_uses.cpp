#include "dmlbits/tensor.hpp"

#include <optional>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "file_identity.hpp"

namespace dmlbits {
namespace {

struct Looked {
  const FileUse* use;
  std::optional<FileIdentity> identity;
  std::string resolved;
  bool null_device = false;
};

bool same_file(const Looked& a, const Looked& b) {
  if (a.use->path == "-" || b.use->path == "-") return a.use->path == b.use->path && a.use->written && b.use->written;
  if (a.null_device && b.null_device) return false;
  if (a.identity && b.identity) return *a.identity == *b.identity;
  return a.resolved == b.resolved;
}

}  // namespace

void check_file_uses(const std::vector<FileUse>& uses) {
  std::vector<Looked> looked;
  for (const FileUse& u : uses) {
    if (u.path.empty()) continue;
    Looked l{&u, std::nullopt, {}, false};
    if (u.path != "-") {
      l.identity = file_identity(u.path);
      l.resolved = resolved_path(u.path);
      l.null_device = is_null_device(u.path);
    }
    looked.push_back(std::move(l));
  }
  for (std::size_t i = 0; i < looked.size(); ++i) {
    for (std::size_t j = i + 1; j < looked.size(); ++j) {
      const FileUse& a = *looked[i].use;
      const FileUse& b = *looked[j].use;
      if (!a.written && !b.written) continue;
      if ((a.in_place && b.operand) || (b.in_place && a.operand)) continue;
      if (!same_file(looked[i], looked[j])) continue;
      if (a.path == "-") throw Error(Errc::usage, fmt::format("{} and {} both write standard output", a.name, b.name));
      if (a.path == b.path)
        throw Error(Errc::usage, fmt::format("{} and {} name the same file {}", a.name, b.name, quote_path(a.path)));
      throw Error(Errc::usage, fmt::format("{} {} and {} {} are the same file", a.name, quote_path(a.path), b.name,
                                           quote_path(b.path)));
    }
  }
}

}  // namespace dmlbits
