// The Win32 implementation of files.hpp. Paths are UTF-8 and are opened in their UTF-16 form
// (CreateFileW and friends), so names outside the ANSI code page work. Files are opened with
// every sharing mode, as POSIX files behave: a reader does not stop another program from
// replacing or removing the file, and a temporary file can be removed while still open.
#include <fcntl.h>
#include <io.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <random>
#include <string_view>
#include <utility>
#include <vector>

#include "dmlbits/error.hpp"
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

namespace {
// ReadFile and WriteFile at an offset move a synchronous handle's position, which pread and
// pwrite do not: `io` runs with an OVERLAPPED at `offset`, and the position is put back. The
// readers that use read_at do not mix it with read(), nor the writers write_at with write().
// Returns whether `io` succeeded, and GetLastError() just after it.
template <class Io>
std::pair<bool, DWORD> at_offset(HANDLE h, std::uint64_t offset, Io io) {
  LARGE_INTEGER here{};
  const bool restore = ::SetFilePointerEx(h, LARGE_INTEGER{}, &here, FILE_CURRENT) != 0;
  OVERLAPPED at{};
  at.Offset = static_cast<DWORD>(offset);
  at.OffsetHigh = static_cast<DWORD>(offset >> 32);
  const bool ok = io(&at);
  const DWORD err = ::GetLastError();
  if (restore) ::SetFilePointerEx(h, here, nullptr, FILE_BEGIN);
  return {ok, err};
}
}  // namespace

std::size_t File::read_at(std::uint64_t offset, std::span<std::byte> buffer) {
  DWORD n = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(buffer.size(), 1u << 30));
  const HANDLE h = handle_of(handle_);
  const auto [ok, err] =
      at_offset(h, offset, [&](OVERLAPPED* at) { return ::ReadFile(h, buffer.data(), want, &n, at) != 0; });
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

std::size_t File::write_at(std::uint64_t offset, std::span<const std::byte> data) {
  DWORD n = 0;
  const DWORD want = static_cast<DWORD>(std::min<std::size_t>(data.size(), 1u << 30));
  const HANDLE h = handle_of(handle_);
  const auto [ok, err] =
      at_offset(h, offset, [&](OVERLAPPED* at) { return ::WriteFile(h, data.data(), want, &n, at) != 0; });
  if (!ok) throw std::system_error(win32::error_code(err));
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
// only if no file has that name (CREATE_NEW), trying again with other letters if one has. The
// file takes the folder's inherited permissions, as a file created in place would. A replaced
// file's own ACL is not copied: wine turns a DACL read from a file into mode bits with execute
// added (a 0600 file became 0770), and ReplaceFileW, below, keeps it only on Windows.
// `flags`: CreateFileW's (FILE_FLAG_DELETE_ON_CLOSE for PendingFile).
namespace {
struct NewFile {
  HANDLE handle;
  std::string path;
};
NewFile create_temporary(const std::string& destination, DWORD access, DWORD flags) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static std::atomic<std::uint64_t> counter{0};
  std::mt19937_64 random(std::random_device{}() ^ (::GetTickCount64() << 16) ^ ::GetCurrentProcessId() ^ counter++);
  const std::string tmpl = temporary_name_for(destination);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = tmpl;
    for (std::size_t i = name.size() - 6; i < name.size(); ++i) name[i] = kLetters[random() % (sizeof kLetters - 1)];
    const HANDLE h = ::CreateFileW(win32::widen(name).c_str(), access, kShareAll, nullptr, CREATE_NEW,
                                   FILE_ATTRIBUTE_NORMAL | flags, nullptr);
    if (h != INVALID_HANDLE_VALUE) return {h, std::move(name)};
    const DWORD err = ::GetLastError();
    if (err != ERROR_FILE_EXISTS && err != ERROR_ALREADY_EXISTS) throw std::system_error(win32::error_code(err));
  }
  throw std::system_error(std::make_error_code(std::errc::file_exists));
}
}  // namespace

// DELETE access, for a file to be marked for deletion until it is complete.
TemporaryFile create_temporary_beside(const std::string& destination) {
  NewFile f = create_temporary(destination, GENERIC_READ | GENERIC_WRITE | DELETE, 0);
  return TemporaryFile{File(win32::handle_to_int(f.handle), true), std::move(f.path)};
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

namespace {

// NtSetInformationFile's FileLinkInformation (11) and FileLinkInformationEx (72): documented
// in the WDK (ntifs.h), which mingw-w64 does not ship; ntdll exports the call on every Windows.
constexpr ULONG kFileLinkInformation = 11;
constexpr ULONG kFileLinkInformationEx = 72;
constexpr ULONG kLinkReplaceIfExists = 0x1;  // FILE_LINK_REPLACE_IF_EXISTS
constexpr ULONG kLinkPosixSemantics = 0x2;   // FILE_LINK_POSIX_SEMANTICS (Windows 10 1809 on)
struct LinkInformation {                     // FILE_LINK_INFORMATION(_EX): ReplaceIfExists (a BOOLEAN) or Flags
  ULONG flags;
  HANDLE root_directory;
  ULONG name_bytes;
  WCHAR name[1];
};
struct IoStatus {  // IO_STATUS_BLOCK
  union {
    LONG status;
    void* pointer;
  };
  ULONG_PTR information;
};
struct NtString {  // UNICODE_STRING
  USHORT length;
  USHORT maximum_length;
  PWSTR buffer;
};
using NtSetInformationFileFn = LONG(WINAPI*)(HANDLE, IoStatus*, void*, ULONG, ULONG);
using DosPathToNtPathFn = LONG(WINAPI*)(PCWSTR, NtString*, PWSTR*, void*);
using FreeNtStringFn = void(WINAPI*)(NtString*);

template <typename Fn>
Fn ntdll(const char* name) {
  return reinterpret_cast<Fn>(reinterpret_cast<void*>(::GetProcAddress(::GetModuleHandleW(L"ntdll.dll"), name)));
}

// Statuses of a file system or a Windows that has no such call, or no hard links (FAT, exFAT,
// some network shares): the file is then named by the older way (commit_by_copy).
bool unsupported(LONG status) {
  switch (static_cast<ULONG>(status)) {
    case 0xC0000002:  // STATUS_NOT_IMPLEMENTED (wine 8 for FileLinkInformationEx)
    case 0xC0000003:  // STATUS_INVALID_INFO_CLASS
    case 0xC000000D:  // STATUS_INVALID_PARAMETER
    case 0xC0000010:  // STATUS_INVALID_DEVICE_REQUEST
    case 0xC00000BB:  // STATUS_NOT_SUPPORTED
      return true;
    default:
      return false;
  }
}

// Gives the open file `h` the name `destination` too (a hard link), replacing the file of that
// name in one step, as rename(2) does: FileLinkInformationEx with POSIX semantics where the
// system has it (a file others have open, with FILE_SHARE_DELETE, is then replaced), else
// FileLinkInformation. Returns the NTSTATUS (0: done).
LONG link_open_file(HANDLE h, const std::string& destination) {
  static const auto set_information = ntdll<NtSetInformationFileFn>("NtSetInformationFile");
  static const auto to_nt_path = ntdll<DosPathToNtPathFn>("RtlDosPathNameToNtPathName_U_WithStatus");
  static const auto free_string = ntdll<FreeNtStringFn>("RtlFreeUnicodeString");
  if (!set_information || !to_nt_path || !free_string) return static_cast<LONG>(0xC0000002);
  NtString nt_path{};
  if (const LONG status = to_nt_path(win32::widen(destination).c_str(), &nt_path, nullptr, nullptr); status != 0)
    return status;
  std::string storage(offsetof(LinkInformation, name) + nt_path.length, '\0');
  auto* info = reinterpret_cast<LinkInformation*>(storage.data());
  info->name_bytes = nt_path.length;
  std::memcpy(info->name, nt_path.buffer, nt_path.length);
  free_string(&nt_path);
  IoStatus io{};
  info->flags = kLinkReplaceIfExists | kLinkPosixSemantics;
  LONG status = set_information(h, &io, info, static_cast<ULONG>(storage.size()), kFileLinkInformationEx);
  if (unsupported(status)) {
    info->flags = TRUE;  // FILE_LINK_INFORMATION's ReplaceIfExists, in the same first byte
    status = set_information(h, &io, info, static_cast<ULONG>(storage.size()), kFileLinkInformation);
  }
  return status;
}

std::string hex(LONG status) {
  char text[9];
  std::snprintf(text, sizeof text, "%08lx", static_cast<unsigned long>(static_cast<ULONG>(status)));
  return text;
}

}  // namespace

// Windows has no unnamed files: the temporary file has its name from the start, created
// marked for deletion when its handle closes (FILE_FLAG_DELETE_ON_CLOSE, from the first
// instant: no moment exists in which it has a name and no mark), so that a process that dies
// however it dies (TerminateProcess included) leaves nothing. commit() never clears the mark.
PendingFile PendingFile::create(const std::string& destination) {
  PendingFile p;
  p.destination_ = destination;
  NewFile t = create_temporary(destination, GENERIC_READ | GENERIC_WRITE | DELETE, FILE_FLAG_DELETE_ON_CLOSE);
  p.file_ = File(win32::handle_to_int(t.handle), true);
  p.temp_path_ = std::move(t.path);
  p.committed_ = false;
  return p;
}

// Where the file system has no hard links: the data is copied into a second temporary file,
// marked for deletion by FileDispositionInfo (its mark, unlike the first file's, can be
// cleared), which then replaces the destination as before. A kill between its creation and its
// mark, or between clearing the mark and the rename, leaves that file: said in named_because().
void PendingFile::commit_by_copy(bool sync) {
  TemporaryFile copy = create_temporary_beside(destination_);
  const HANDLE h = handle_of(copy.file.handle_);
  // A file system that refuses the mark too still gets its output, named all along.
  const bool marked = set_delete_on_close(h, true);
  try {
    std::vector<std::byte> buffer(1 << 20);
    std::uint64_t at = 0;
    for (std::size_t n; (n = file_.read_at(at, buffer)) != 0; at += n)
      for (std::size_t done = 0; done < n;) done += copy.file.write(std::span(buffer).subspan(done, n - done));
    if (sync && !::FlushFileBuffers(h)) win32::throw_last_error("cannot flush the file to the disk");
    if (marked && !set_delete_on_close(h, false)) win32::throw_last_error("cannot keep the temporary file");
    copy.file.close();
    replace_file_with(copy.path, destination_, sync ? MOVEFILE_WRITE_THROUGH : 0);
  } catch (...) {
    copy.file = File();
    remove_file(copy.path);
    throw;
  }
  file_ = File();  // the first file, still marked, goes with its handle
}

void PendingFile::commit(bool sync) {
  if (committed_) return;
  const HANDLE h = handle_of(file_.handle_);
  if (sync && !::FlushFileBuffers(h)) win32::throw_last_error("cannot flush the file to the disk");
  // The complete file takes the destination's name as a second link, in one step: before it,
  // a kill leaves the old destination and no file (the mark); after it, the new destination,
  // and closing the handle (or the process's end) removes the temporary name, never the data.
  const LONG status = link_open_file(h, destination_);
  if (status == 0) {
    committed_ = true;
    // With --sync the new name is flushed too (NTFS commits its log with the file's metadata).
    const bool flushed = !sync || ::FlushFileBuffers(h);
    const DWORD err = ::GetLastError();
    file_ = File();
    if (!flushed) throw std::system_error(win32::error_code(err), "cannot flush the folder entry to the disk");
    return;
  }
  // Any refusal falls back to the older way, which says what is wrong if it fails too (a
  // destination that others hold open, a folder that refuses the name).
  if (unsupported(status)) named_because_ = "the file system of '" + directory_of(destination_) + "' has no hard links";
  else named_because_ = "the file could not be linked into place (NTSTATUS 0x" + hex(status) + ")";
  commit_by_copy(sync);
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
