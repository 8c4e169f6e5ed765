// Whether two names are one file: the identity a file keeps under every name it has (a
// symbolic or hard link, `./a` for `a`, another spelling of its folder). POSIX in
// file_identity.cpp, Windows in file_identity_win32.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dmlbits {

// The volume and the file's number on it: st_dev and st_ino on POSIX, the volume serial number
// and the file index on Windows.
struct FileIdentity {
  std::uint64_t volume = 0;
  std::uint64_t index = 0;
  friend bool operator==(const FileIdentity&, const FileIdentity&) = default;
};

// The identity of the file at `path`, following symbolic links; nullopt when there is no
// file there (or it cannot be looked up).
std::optional<FileIdentity> file_identity(const std::string& path);

// `path` with its existing part resolved (symbolic links, `.` and `..`, made absolute), so
// that two spellings of a file not created yet compare equal; on Windows, where names are
// compared without regard to case, folded to lower case and with `\` separators. The path as
// given when it cannot be resolved.
std::string resolved_path(const std::string& path);

// Whether `path` names the null device (/dev/null, NUL), whose writes are discarded: any
// number of outputs may go there.
bool is_null_device(const std::string& path);

}  // namespace dmlbits
