// The Win32 implementation of files.hpp. Paths are UTF-8 and are opened in their UTF-16 form
// (CreateFileW and friends), so names outside the ANSI code page work. Files are opened with
// every sharing mode, as POSIX files behave: a reader does not stop another program from
// replacing or removing the file, and a temporary file can be removed while still open.
#include <fcntl.h>
#include <io.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <string_view>
#include <utility>

#include "dmlbits/process.hpp"
#include "files.hpp"
#include "win32.hpp"

namespace dmlbits {
namespace {

constexpr DWORD kShareAll = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

HANDLE handle_of(int h) { return win32::int_to_handle(h); }

bool is_separator(char c) { return c == '/' || c == '\\'; }

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of("/\\");
  const bool drive = path.size() >= 2 && path[1] == ':';
  if (slash == std::string::npos) return drive ? path.substr(0, 2) : ".";
  if (slash == 0) return path.substr(0, 1);
  if (drive && slash == 2) return path.substr(0, 3);  // "C:\x" is in "C:\", not in "C:"
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of("/\\:");
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

FileInfo info_of(HANDLE h) {
  FileInfo info;
  if (::GetFileType(h) != FILE_TYPE_DISK) return info;  // a pipe, console or device (NUL)
  // FileStandardInfo rather than GetFileInformationByHandle, which also asks for the volume's
  // serial number and fails (ERROR_INVALID_HANDLE) under wine for a standard input redirected
  // from a file; the size and the folder flag are all that is needed.
  FILE_STANDARD_INFO fi{};
  if (!::GetFileInformationByHandleEx(h, FileStandardInfo, &fi, sizeof fi)) win32::throw_last_error();
  if (fi.Directory) {
    info.type = FileType::directory;
  } else {
    info.type = FileType::regular;
    info.size = static_cast<std::uint64_t>(fi.EndOfFile.QuadPart);
  }
  return info;
}

// FILE_FLAG_BACKUP_SEMANTICS lets a folder be opened, as open(2) does, so that it is reported
// as a folder (by info()) rather than as "access denied".
HANDLE open_handle(const std::string& path, DWORD access, DWORD disposition) {
  return ::CreateFileW(win32::widen(path).c_str(), access, kShareAll, nullptr, disposition,
                       FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
}

}  // namespace

File::File(File&& other) noexcept : handle_(std::exchange(other.handle_, -1)), owned_(other.owned_) {}

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    if (owned_ && handle_ >= 0) ::CloseHandle(handle_of(handle_));
    handle_ = std::exchange(other.handle_, -1);
    owned_ = other.owned_;
  }
  return *this;
}

File::~File() {
  if (owned_ && handle_ >= 0) ::CloseHandle(handle_of(handle_));
}

File File::open_for_reading(const std::string& path) {
  const HANDLE h = open_handle(path, GENERIC_READ, OPEN_EXISTING);
  if (h == INVALID_HANDLE_VALUE) win32::throw_last_error();
  return File(win32::handle_to_int(h), true);
}

File File::open_existing_for_writing(const std::string& path, bool truncate) {
  const HANDLE h = open_handle(path, GENERIC_WRITE, OPEN_EXISTING);
  if (h == INVALID_HANDLE_VALUE) win32::throw_last_error();
  File f(win32::handle_to_int(h), true);
  if (truncate && ::GetFileType(h) == FILE_TYPE_DISK && !::SetEndOfFile(h)) win32::throw_last_error();
  return f;
}

// The C runtime's descriptors 0 and 1 are put in binary mode too, for any code that goes
// through them: .npy bytes must never have "\n" turned into "\r\n".
File File::standard_input() noexcept {
  ::_setmode(0, _O_BINARY);
  return File(win32::handle_to_int(::GetStdHandle(STD_INPUT_HANDLE)), false);
}
File File::standard_output() noexcept {
  ::_setmode(1, _O_BINARY);
  return File(win32::handle_to_int(::GetStdHandle(STD_OUTPUT_HANDLE)), false);
}

FileInfo File::info() const { return info_of(handle_of(handle_)); }

std::size_t File::read(std::span<std::byte> buffer) {
  DWORD n = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(buffer.size(), 1u << 30));
  if (::ReadFile(handle_of(handle_), buffer.data(), want, &n, nullptr)) return n;
  // A pipe whose writer closed it is the end of the input, as on POSIX.
  const DWORD err = ::GetLastError();
  if (err == ERROR_BROKEN_PIPE || err == ERROR_HANDLE_EOF) return 0;
  // A folder opened for reading: EISDIR, as read(2) says, not "incorrect function".
  if (err == ERROR_INVALID_FUNCTION && info().type == FileType::directory)
    throw std::system_error(std::make_error_code(std::errc::is_a_directory));
  throw std::system_error(win32::error_code(err));
}

std::size_t File::read_at(std::uint64_t offset, std::span<std::byte> buffer) {
  // ReadFile at an offset moves the file position of a synchronous handle, which pread does
  // not: the position is put back. The readers that use read_at do not mix it with read().
  LARGE_INTEGER here{};
  const HANDLE h = handle_of(handle_);
  const bool restore = ::SetFilePointerEx(h, LARGE_INTEGER{}, &here, FILE_CURRENT) != 0;
  OVERLAPPED at{};
  at.Offset = static_cast<DWORD>(offset);
  at.OffsetHigh = static_cast<DWORD>(offset >> 32);
  DWORD n = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(buffer.size(), 1u << 30));
  const bool ok = ::ReadFile(h, buffer.data(), want, &n, &at) != 0;
  const DWORD err = ::GetLastError();
  if (restore) ::SetFilePointerEx(h, here, nullptr, FILE_BEGIN);
  if (ok) return n;
  if (err == ERROR_HANDLE_EOF) return 0;
  throw std::system_error(win32::error_code(err));
}

void File::seek(std::uint64_t offset) {
  LARGE_INTEGER to{};
  to.QuadPart = static_cast<LONGLONG>(offset);
  if (!::SetFilePointerEx(handle_of(handle_), to, nullptr, FILE_BEGIN)) win32::throw_last_error();
}

std::size_t File::write(std::span<const std::byte> data) {
  DWORD n = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(data.size(), 1u << 30));
  if (!::WriteFile(handle_of(handle_), data.data(), want, &n, nullptr)) win32::throw_last_error();
  return n;
}

void File::close() {
  const int h = std::exchange(handle_, -1);
  if (h < 0 || !owned_) return;
  if (!::CloseHandle(handle_of(h))) win32::throw_last_error();
}

std::optional<FileInfo> file_info(const std::string& path, std::error_code& error) {
  // Opening with no access follows links and works on folders and on files others have open.
  const HANDLE h = open_handle(path, 0, OPEN_EXISTING);
  if (h == INVALID_HANDLE_VALUE) {
    error = win32::error_code(::GetLastError());
    return std::nullopt;
  }
  std::optional<FileInfo> info;
  try {
    info = info_of(h);
    error.clear();
  } catch (const std::system_error& e) {
    error = e.code();
  }
  ::CloseHandle(h);
  return info;
}

std::optional<FileInfo> file_info(const std::string& path) {
  std::error_code ignored;
  return file_info(path, ignored);
}

std::optional<FileInfo> link_info(const std::string& path) {
  WIN32_FILE_ATTRIBUTE_DATA data{};
  if (!::GetFileAttributesExW(win32::widen(path).c_str(), GetFileExInfoStandard, &data)) return std::nullopt;
  FileInfo info;
  if (data.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) return info;  // a link: "other"
  if (data.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) {
    info.type = FileType::directory;
  } else {
    info.type = FileType::regular;
    info.size = (std::uint64_t{data.nFileSizeHigh} << 32) | data.nFileSizeLow;
  }
  return info;
}

bool can_write_file(const std::string& path, std::error_code& error) {
  // Access rights on Windows are ACLs, the read-only attribute and sharing: asking for write
  // access is the one way to know.
  const HANDLE h = open_handle(path, GENERIC_WRITE, OPEN_EXISTING);
  if (h == INVALID_HANDLE_VALUE) {
    error = win32::error_code(::GetLastError());
    return false;
  }
  ::CloseHandle(h);
  return true;
}

bool can_create_in(const std::string& path, std::error_code& error) {
  // Whether the folder takes new files is only known by creating one, which
  // create_temporary_beside() does next; here the folder must exist and be a folder.
  const DWORD attributes = ::GetFileAttributesW(win32::widen(path).c_str());
  if (attributes == INVALID_FILE_ATTRIBUTES) {
    error = win32::error_code(::GetLastError());
    return false;
  }
  if (!(attributes & FILE_ATTRIBUTE_DIRECTORY)) {
    error = std::make_error_code(std::errc::not_a_directory);
    return false;
  }
  return true;
}

// ".NAME.dmlbits-XXXXXX", NAME cut short (between UTF-8 characters) where the whole would pass
// 255 bytes: NTFS allows 255 UTF-16 units, which 255 UTF-8 bytes never exceed.
std::string temporary_name_for(const std::string& destination) {
  const std::string base = base_name(destination);
  constexpr std::string_view kSuffix = ".dmlbits-XXXXXX";
  constexpr std::size_t kMaxBase = 255 - 1 - kSuffix.size();
  std::size_t keep = std::min(base.size(), kMaxBase);
  while (keep > 0 && keep < base.size() && (static_cast<unsigned char>(base[keep]) & 0xC0) == 0x80) --keep;
  const std::string dir = directory_of(destination);
  const char* sep = !dir.empty() && (is_separator(dir.back()) || dir.back() == ':') ? "" : "/";
  return dir + sep + "." + base.substr(0, keep) + std::string(kSuffix);
}

// Windows has no mkstemp that takes UTF-8: the X's are replaced here and the file is created
// only if no file has that name (CREATE_NEW), trying again with other letters if one has. New
// files take the folder's inherited permissions, as a file created in place would; a replaced
// file keeps its own (ReplaceFileW, below).
TemporaryFile create_temporary_beside(const std::string& destination) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static std::atomic<std::uint64_t> counter{0};
  std::mt19937_64 random(std::random_device{}() ^ (::GetTickCount64() << 16) ^ ::GetCurrentProcessId() ^ counter++);
  const std::string tmpl = temporary_name_for(destination);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = tmpl;
    for (std::size_t i = name.size() - 6; i < name.size(); ++i) name[i] = kLetters[random() % (sizeof kLetters - 1)];
    // DELETE access, for PendingFile to mark the file for deletion until it is complete.
    const HANDLE h = ::CreateFileW(win32::widen(name).c_str(), GENERIC_READ | GENERIC_WRITE | DELETE, kShareAll,
                                   nullptr, CREATE_NEW, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (h != INVALID_HANDLE_VALUE) return TemporaryFile{File(win32::handle_to_int(h), true), std::move(name)};
    const DWORD err = ::GetLastError();
    if (err != ERROR_FILE_EXISTS && err != ERROR_ALREADY_EXISTS) throw std::system_error(win32::error_code(err));
  }
  throw std::system_error(std::make_error_code(std::errc::file_exists));
}

// ReplaceFileW swaps an existing file for the new one in one step and keeps the old file's
// attributes and permissions, as the POSIX build keeps its mode; where there is no file to
// replace (or the file system cannot), MoveFileExW with MOVEFILE_REPLACE_EXISTING renames, which
// is atomic for a file in the same folder.
namespace {
void replace_file_with(const std::string& from, const std::string& to, DWORD move_flags) {
  const std::wstring wfrom = win32::widen(from);
  const std::wstring wto = win32::widen(to);
  const auto existing = link_info(to);
  if (existing && existing->type == FileType::regular &&
      ::ReplaceFileW(wto.c_str(), wfrom.c_str(), nullptr, REPLACEFILE_IGNORE_MERGE_ERRORS, nullptr, nullptr))
    return;
  if (!::MoveFileExW(wfrom.c_str(), wto.c_str(), MOVEFILE_REPLACE_EXISTING | move_flags))
    win32::throw_last_error("cannot rename the temporary file into place");
}

// Marks (or unmarks) the open file for deletion when its last handle closes, which the system
// does for a process however it ends, TerminateProcess included.
bool set_delete_on_close(HANDLE h, bool del) {
  FILE_DISPOSITION_INFO info{};
  info.DeleteFile = del ? TRUE : FALSE;
  return ::SetFileInformationByHandle(h, FileDispositionInfo, &info, sizeof info) != 0;
}
}  // namespace

void replace_file(const std::string& from, const std::string& to) { replace_file_with(from, to, 0); }

// Windows has no unnamed files: the temporary file has its name from the start, marked for
// deletion until it is complete, so that a process that dies before then leaves nothing.
PendingFile PendingFile::create(const std::string& destination) {
  PendingFile p;
  p.destination_ = destination;
  TemporaryFile t = create_temporary_beside(destination);
  p.file_ = std::move(t.file);
  p.temp_path_ = std::move(t.path);
  p.committed_ = false;
  if (!set_delete_on_close(handle_of(p.file_.handle_), true))
    p.named_because_ = "cannot mark the temporary file for deletion: " + win32::error_code(::GetLastError()).message();
  return p;
}

void PendingFile::commit(bool sync) {
  if (committed_) return;
  const HANDLE h = handle_of(file_.handle_);
  if (sync && !::FlushFileBuffers(h)) win32::throw_last_error("cannot flush the file to the disk");
  // From here until the rename, a process killed leaves the complete file under its
  // temporary name: the platform cannot rename a file marked for deletion into place.
  if (named_because_.empty() && !set_delete_on_close(h, false))
    win32::throw_last_error("cannot keep the temporary file");
  file_.close();
  replace_file_with(temp_path_, destination_, sync ? MOVEFILE_WRITE_THROUGH : 0);
  committed_ = true;
}

bool names_open_descriptor(const std::string&) { return false; }  // no /dev/fd, no /proc/self/fd

bool is_standard_output(const std::string&) { return false; }

std::string utf8_from_wide(std::wstring_view wide) { return win32::narrow(wide); }

bool remove_file(const std::string& path) noexcept {
  if (::DeleteFileW(win32::widen(path).c_str())) return true;
  const DWORD err = ::GetLastError();
  return err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND;
}

}  // namespace dmlbits
