// The POSIX implementation of file_identity.hpp.
#include "file_identity.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <system_error>

#include "files.hpp"

namespace dmlbits {

std::optional<FileIdentity> file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

std::string resolved_path(const std::string& path) {
  std::error_code error;
  const std::filesystem::path resolved =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path_from_utf8(path), error), error);
  return error ? path : path_to_utf8(resolved);
}

bool is_null_device(const std::string& path) {
  const auto id = file_identity(path);
  return id && id == file_identity("/dev/null");
}

}  // namespace dmlbits
