// What PendingFile does the same on every system (files.hpp): moving it and discarding it. Its
// creation and commit() are the system's own (files.cpp, files_win32.cpp).
#include <utility>

#include "files.hpp"

namespace dmlbits {

PendingFile::PendingFile(PendingFile&& other) noexcept
    : destination_(std::move(other.destination_)),
      temp_path_(std::move(other.temp_path_)),
      named_because_(std::move(other.named_because_)),
      file_(std::move(other.file_)),
      committed_(std::exchange(other.committed_, true)) {}

PendingFile& PendingFile::operator=(PendingFile&& other) noexcept {
  if (this != &other) {
    discard();
    destination_ = std::move(other.destination_);
    temp_path_ = std::move(other.temp_path_);
    named_because_ = std::move(other.named_because_);
    file_ = std::move(other.file_);
    committed_ = std::exchange(other.committed_, true);
  }
  return *this;
}

PendingFile::~PendingFile() { discard(); }

// Closing is enough for the files that are never named (Linux's O_TMPFILE; on Windows the
// file marked for deletion on close); a named temporary file is removed by its name.
void PendingFile::discard() noexcept {
  if (committed_) return;
  committed_ = true;
  file_ = File();
  if (!temp_path_.empty()) remove_file(temp_path_);
}

}  // namespace dmlbits
