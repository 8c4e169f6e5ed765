#include "npy_stream.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

// `context` is "" in open(), whose caller adds "reading 'PATH'", and that context elsewhere.
[[noreturn]] void io_fail(const std::string& context, std::string_view what, const std::error_code& error) {
  throw Error(Errc::io, fmt::format("{}{}: {}", context, what, error.message()));
}

// Reads up to `size` bytes at `offset` (or sequentially); returns the count read (< size at
// end of file). An interrupted read checks for an interrupt and goes on (File's contract).
std::size_t read_some(File& file, bool seekable, std::uint64_t offset, std::byte* dst, std::size_t size,
                      const std::string& context) {
  std::size_t done = 0;
  while (done < size) {
    std::size_t n = 0;
    try {
      n = seekable ? file.read_at(offset + done, {dst + done, size - done}) : file.read({dst + done, size - done});
    } catch (const std::system_error& e) {
      io_fail(context, "read failed", e.code());
    }
    if (n == 0) break;
    done += n;
  }
  return done;
}

}  // namespace

NpyStream::~NpyStream() = default;

std::unique_ptr<NpyStream> NpyStream::open(const std::string& path, std::vector<std::byte>& consumed) {
  std::unique_ptr<NpyStream> s(new NpyStream);
  s->path_ = path;
  if (path == "-") {
    s->file_ = File::standard_input();
  } else {
    try {
      s->file_ = File::open_for_reading(path);
    } catch (const std::system_error& e) {
      throw Error(Errc::io, fmt::format("cannot open {}: {}", quote_path(path), e.code().message()));
    }
  }
  FileInfo st;
  try {
    st = s->file_.info();
  } catch (const std::system_error& e) {
    io_fail("", "cannot stat", e.code());
  }
  if (st.type == FileType::directory) io_fail("", "cannot read", std::make_error_code(std::errc::is_a_directory));
  // Standard input is read in order even when it is a regular file (`< a.npy`): its offset may
  // not be 0, and a caller that reads it whole after a nullptr must find it past `consumed`.
  s->seekable_ = st.type == FileType::regular && path != "-";
  // The header: magic, version, length, then the dict.
  consumed.resize(12);
  std::size_t got = read_some(s->file_, s->seekable_, 0, consumed.data(), consumed.size(), "");
  consumed.resize(got);
  if (!is_npy(consumed) || got < 10) return nullptr;
  const int major = std::to_integer<int>(consumed[6]);
  const std::size_t prefix = major == 1 ? 10 : 12;
  std::size_t header_len = std::to_integer<std::size_t>(consumed[8]) | (std::to_integer<std::size_t>(consumed[9]) << 8);
  if (major != 1 && got >= 12)
    header_len |=
        (std::to_integer<std::size_t>(consumed[10]) << 16) | (std::to_integer<std::size_t>(consumed[11]) << 24);
  if (header_len > kMaxNpyHeaderBytes)  // refused from the length alone (not read whole to say why)
    parse_npy_header(consumed);
  const std::size_t want = prefix + header_len;
  if (want > consumed.size()) {
    const std::size_t have = consumed.size();
    consumed.resize(want);
    consumed.resize(have + read_some(s->file_, s->seekable_, have, consumed.data() + have, want - have, ""));
  }
  NpyHeader h = parse_npy_header(consumed);
  if (s->seekable_) {  // before anything is read whole, or any output made
    const auto size = st.size;
    const std::uint64_t found = size > h.data_offset ? size - h.data_offset : 0;
    check_npy_data_size(h, found);
  }
  if (h.fortran_order && h.shape.rank() > 1) return nullptr;
  if (h.needs_swap()) return nullptr;
  if (!s->seekable_ && consumed.size() > h.data_offset) {
    return nullptr;  // the pipe already gave us data bytes; let the whole-input reader have them
  }
  s->header_ = h;
  consumed.clear();
  return s;
}

void NpyStream::read(std::uint64_t first, std::size_t count, std::byte* dst) {
  const std::size_t size = dtype_info(header_.dtype).size;
  const std::size_t bytes = count * size;
  if (!seekable_ && first != position_) throw Error(Errc::internal, "a pipe must be read in order");
  const std::size_t got = read_some(file_, seekable_, header_.data_offset + first * size, dst, bytes,
                                    fmt::format("reading {}: ", quote_path(path_)));
  if (got < bytes) {
    // A regular file's size was checked at open, so a short read means another program cut it
    // since: an I/O failure, not a malformed file. A pipe that ends early is truncated input.
    if (seekable_) {
      // Data up to here was found, unless nothing was: then the file may end before `first`
      // (another thread's read, or a read out of order), and its size says where.
      std::uint64_t found = first * size + got;
      if (got == 0) {
        try {
          const std::uint64_t now = file_.info().size;
          found = std::min(found, now > header_.data_offset ? now - header_.data_offset : 0);
        } catch (const std::system_error&) {
        }
      }
      throw Error(Errc::io, fmt::format("reading {}: file shrank while reading: expected {} bytes of data, found {}",
                                        quote_path(path_), header_.data_bytes, found));
    }
    throw Error(Errc::invalid_input, fmt::format("reading {}: truncated: expected {} bytes of data, found {}",
                                                 quote_path(path_), header_.data_bytes, first * size + got));
  }
  if (!seekable_) position_ = first + count;  // read only by one thread (a file may be read by two)
}

void NpyStream::finish() {
  if (seekable_) return;
  std::byte extra[1];
  if (read_some(file_, false, 0, extra, 1, fmt::format("reading {}: ", quote_path(path_))) != 0)
    throw Error(Errc::invalid_input, fmt::format("reading {}: trailing garbage after {} bytes of data",
                                                 quote_path(path_), header_.data_bytes));
}

Tensor NpyStream::read_all() {
  Tensor t(header_.dtype, header_.shape);
  read(0, static_cast<std::size_t>(t.element_count()), t.data());
  finish();
  return t;
}

}  // namespace dmlbits
