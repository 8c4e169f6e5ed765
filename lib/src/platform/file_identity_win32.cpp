// The Win32 implementation of file_identity.hpp.
#include <algorithm>
#include <filesystem>
#include <system_error>

#include "file_identity.hpp"
#include "files.hpp"
#include "win32.hpp"

namespace dmlbits {

std::optional<FileIdentity> file_identity(const std::string& path) {
  // No access asked for, only the attributes: a file another program holds open for writing,
  // or one this process may not read, still has its identity looked up. Folders need
  // FILE_FLAG_BACKUP_SEMANTICS to be opened at all.
  const HANDLE h = ::CreateFileW(win32::widen(path).c_str(), 0, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE,
                                 nullptr, OPEN_EXISTING, FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) return std::nullopt;
  BY_HANDLE_FILE_INFORMATION info{};
  // A device (NUL, CON) or a pipe has no file index; resolved_path() then compares names.
  const bool ok = ::GetFileType(h) == FILE_TYPE_DISK && ::GetFileInformationByHandle(h, &info);
  ::CloseHandle(h);
  if (!ok) return std::nullopt;
  return FileIdentity{info.dwVolumeSerialNumber,
                      (static_cast<std::uint64_t>(info.nFileIndexHigh) << 32) | info.nFileIndexLow};
}

std::string resolved_path(const std::string& path) {
  std::error_code error;
  std::filesystem::path resolved =
      std::filesystem::weakly_canonical(std::filesystem::absolute(path_from_utf8(path), error), error);
  if (error) resolved = path_from_utf8(path);
  std::string out = path_to_utf8(resolved.make_preferred());
  // Windows compares names without regard to case; ASCII folding covers the names that matter
  // (NTFS's own table also folds other letters, which a file index then catches once the file
  // exists).
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
  return out;
}

bool is_null_device(const std::string& path) {
  // NUL in any folder and with any extension ("nul", "C:\\x\\NUL.txt") is the null device.
  const auto slash = path.find_last_of("/\\:");
  std::string name = path.substr(slash == std::string::npos ? 0 : slash + 1);
  name = name.substr(0, name.find('.'));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; });
  return name == "NUL";
}

}  // namespace dmlbits
