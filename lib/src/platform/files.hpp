// Files through the operating system: open, read, write, seek, look up, create a temporary file
// beside a destination, replace a file atomically, remove. POSIX today (files.cpp); a Windows
// build replaces files.cpp (files_win32.cpp) and keeps this interface, which holds no
// descriptor and no POSIX type. What PendingFile does alike on both is in pending_file.cpp.
//
// Errors: functions that can fail throw std::system_error whose code() is the operating
// system's (std::generic_category on POSIX, where code().message() is strerror's text). The
// callers word the message ("cannot open 'a.npy': No such file or directory"), so the same
// failure reads the same whatever the platform. A read or write that a signal interrupts
// (EINTR) is retried after throw_if_interrupted(), which throws Error(Errc::interrupted) once
// SIGINT or SIGTERM arrived.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace dmlbits {

enum class FileType {
  regular,
  directory,
  other,  // a device, FIFO, socket or terminal: read and written in place, never renamed over
};

struct FileInfo {
  FileType type = FileType::other;
  std::uint64_t size = 0;  // bytes, for a regular file; 0 otherwise
};

struct TemporaryFile;

// An open file, closed by its destructor unless it is one of the standard streams, which stay
// open for the rest of the process.
class File {
 public:
  File() = default;  // no file: is_open() is false
  File(File&& other) noexcept;
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();  // closes, ignoring errors (call close() to see them)

  // For reading. The file is not inherited by programs this process starts.
  static File open_for_reading(const std::string& path);
  // For writing in place, without creating or truncating: devices and FIFOs (/dev/null, a
  // named pipe), which cannot be replaced by renaming. With `truncate`, a regular file is
  // emptied first, as cp and tee do to a destination they write in place.
  static File open_existing_for_writing(const std::string& path, bool truncate = false);
  static File standard_input() noexcept;
  static File standard_output() noexcept;

  bool is_open() const noexcept { return handle_ >= 0; }
  // True for standard input and output, which the destructor leaves open.
  bool is_standard() const noexcept { return is_open() && !owned_; }

  FileInfo info() const;
  // One read of at most `buffer.size()` bytes from the current position; 0 only at the end of
  // the input (or for an empty buffer).
  std::size_t read(std::span<std::byte> buffer);
  // One read at `offset`, leaving the position alone; 0 only at or past the end.
  std::size_t read_at(std::uint64_t offset, std::span<std::byte> buffer);
  // Moves the position to `offset` bytes from the start.
  void seek(std::uint64_t offset);
  // One write of at most `data.size()` bytes; returns how many were written (at least 1 for
  // non-empty data). A reader that closed its pipe is std::errc::broken_pipe: SIGPIPE is
  // ignored (install_interrupt_handlers), so it arrives as an error rather than a signal.
  std::size_t write(std::span<const std::byte> data);
  // One write of at most `data.size()` bytes at `offset`, leaving the position alone (on
  // Windows it is put back, as by read_at); returns how many were written (at least 1 for
  // non-empty data). Threads may write disjoint ranges of one file at once (a streamed run's
  // halves); the position is then unspecified, so such a file is not also written with write().
  std::size_t write_at(std::uint64_t offset, std::span<const std::byte> data);
  // Closes the file and reports the operating system's error (a delayed write failure on some
  // file systems). The file is closed afterwards either way; a standard stream is only let go.
  void close();

 private:
  friend TemporaryFile create_temporary_beside(const std::string& destination);
  friend class PendingFile;
  File(int handle, bool owned) noexcept : handle_(handle), owned_(owned) {}
  int handle_ = -1;  // the descriptor, private to files.cpp; a Windows build keeps a HANDLE
  bool owned_ = false;
};

// The file at `path`, following symbolic links; nullopt when there is none or it cannot be
// looked up, with the reason in `error`.
std::optional<FileInfo> file_info(const std::string& path, std::error_code& error);
std::optional<FileInfo> file_info(const std::string& path);
// The same for the link itself when `path` is a symbolic link.
std::optional<FileInfo> link_info(const std::string& path);

// Whether this process may write the existing file `path` (the reason in `error` if not).
bool can_write_file(const std::string& path, std::error_code& error);
// Whether this process may create files in the folder `path` (the reason in `error` if not).
bool can_create_in(const std::string& path, std::error_code& error);

// A new, empty file beside `destination`, named ".NAME.dmlbits-XXXXXX" after the
// destination's NAME (cut short, between UTF-8 characters, where the whole would pass the file
// system's 255-byte limit), with the permissions `destination` will need: those of the file it
// replaces (its owner too, where this process may set it), else those a new file would get.
// Throws std::system_error when the folder does not let the file be created.
struct TemporaryFile {
  File file;
  std::string path;
};
TemporaryFile create_temporary_beside(const std::string& destination);
// The name create_temporary_beside() gives, its X's not yet replaced (for tests).
std::string temporary_name_for(const std::string& destination);

// A file being written for `destination` that nobody can see until commit() gives it that
// name: the one mechanism every output file goes through.
//
// Linux: an unnamed file (open O_TMPFILE in the destination's folder) which vanishes with its
// descriptor if the process dies at any moment, SIGKILL included; commit() links it in: under
// the destination's name directly when there is no file there yet, else under a temporary
// name that is at once renamed over the destination (a window of two system calls in which a
// kill leaves that complete file under the temporary name). Where the file system has no
// O_TMPFILE (EOPNOTSUPP, EISDIR, EINVAL: NFS before 4.2, FUSE, vfat, kernels before 3.11),
// it falls back to a named temporary file (create_temporary_beside) and says why in
// named_because(); a kill then leaves that file behind.
// Windows: a named temporary file created marked for deletion when its handle closes
// (FILE_FLAG_DELETE_ON_CLOSE), so that the system removes it when the process ends before
// commit(), however it ends; commit() never clears the mark: it gives the open file the
// destination's name as a second link, replacing the old file in one step, and closing the
// handle then removes only the temporary name. No moment leaves a temporary file. Where the file
// cannot be linked (no hard links: FAT, exFAT, some network shares), commit() copies the data
// into a second temporary file marked by FileDispositionInfo, clears that mark and renames it
// over the destination (replace_file), and says so in named_because(): a kill just after its
// creation or between clearing its mark and the rename leaves that file.
// Either way, the permissions are those create_temporary_beside gives.
class PendingFile {
 public:
  // Throws std::system_error when the folder does not let the file be created.
  static PendingFile create(const std::string& destination);
  PendingFile(PendingFile&& other) noexcept;
  PendingFile& operator=(PendingFile&& other) noexcept;
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile();  // discards the file unless committed

  File& file() { return file_; }
  // The file's temporary name while it is written; empty when it has none (O_TMPFILE).
  const std::string& temporary_path() const { return temp_path_; }
  // Why the file has a name while it is written (the file system's refusal of O_TMPFILE);
  // empty when it has none. On Windows, where every file has one, why a kill could leave it:
  // set by a commit() that could not link the file into place.
  const std::string& named_because() const { return named_because_; }

  // Gives the complete file the destination's name, atomically (readers see the old file or
  // the new one), and closes it. With `sync`, the data is flushed to the disk before it is
  // named, and the folder's entry after (fsync; FlushFileBuffers and MOVEFILE_WRITE_THROUGH
  // on Windows), so that the new file survives a power cut once commit() returns. Throws
  // std::system_error whose what() names the step that failed, leaving the destination as it
  // was and no temporary file.
  void commit(bool sync);

 private:
  PendingFile() = default;
  void discard() noexcept;
#if defined(_WIN32)
  void commit_by_copy(bool sync);  // where the file cannot be linked into place
#endif
  std::string destination_;
  std::string temp_path_;
  std::string named_because_;
  File file_;
  bool committed_ = false;
};

// Whether `path` reaches one of this process's open files through a symbolic link of the
// kernel's (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a link to one): such a name cannot be
// replaced by renaming without replacing the link itself, so it is written in place. Always
// false on Windows, which has no such links.
bool names_open_descriptor(const std::string& path);
// Whether `path` is the file, pipe or device this process's standard output is.
bool is_standard_output(const std::string& path);

// Puts the file at `from` in the place of `to`, atomically: readers of `to` see the old file or
// the new one, never a mixture. Throws std::system_error whose what() names the step that
// failed ("cannot rename the temporary file into place: ..."), leaving `to` as it was.
void replace_file(const std::string& from, const std::string& to);
// Removes the file at `path`; a missing file is not an error. Returns false on failure.
bool remove_file(const std::string& path) noexcept;

// dmlbits' file names are UTF-8 strings. std::filesystem::path made from a char string, and its
// string(), convert through the ANSI code page on Windows, which mangles other names; these go
// through char8_t, which both systems convert as UTF-8 (on POSIX the bytes are kept as they are).
inline std::filesystem::path path_from_utf8(std::string_view utf8) {
  return std::filesystem::path(std::u8string(utf8.begin(), utf8.end()));
}
inline std::string path_to_utf8(const std::filesystem::path& path) {
  const std::u8string s = path.u8string();
  return std::string(s.begin(), s.end());
}

#if defined(_WIN32)
// A UTF-16 string from a Windows API (an adapter's description) as UTF-8.
std::string utf8_from_wide(std::wstring_view wide);
#endif

}  // namespace dmlbits
