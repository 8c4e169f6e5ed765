#include "io.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "dmlbits/dtype.hpp"
#include "dmlbits/error.hpp"
#include "dmlbits/front_end.hpp"
#include "files.hpp"

namespace dmlbits {
namespace {

[[noreturn]] void io_fail(std::string_view what, const std::error_code& error) {
  throw Error(Errc::io, fmt::format("{}: {}", what, error.message()));
}

// Runs f(), a platform call, turning its std::system_error into Errc::io "WHAT: reason".
template <class F>
auto os_call(std::string_view what, F&& f) {
  try {
    return f();
  } catch (const std::system_error& e) {
    io_fail(what, e.code());
  }
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Why the file for `path` could not be created in its folder `dir` (`otherwise`, unless there
// is a file at `path`): replacing one creates a new file there too, which is renamed over it,
// and a writable file in a folder that is not is a surprise unless the message says so.
std::string cannot_create_message(const std::string& path, const std::string& dir, std::string_view otherwise) {
  if (link_info(path))
    return fmt::format("replacing {} atomically needs write access to its folder '{}'", quote_path(path), dir);
  return fmt::format("{} '{}'", otherwise, dir);
}

void write_all(File& file, const std::byte* data, std::size_t size) {
  constexpr std::size_t kMaxWrite = 8 << 20;  // bounded writes, so that an interrupt is seen
  while (size > 0) {
    throw_if_interrupted();
    std::size_t n = 0;
    try {
      n = file.write({data, std::min(size, kMaxWrite)});
    } catch (const std::system_error& e) {
      // The reader of a pipe went away (`| head`): the end of the run, not a failure to report.
      if (e.code() == std::errc::broken_pipe)
        throw Error(Errc::broken_pipe, "write failed: the reader closed the pipe");
      io_fail("write failed", e.code());
    }
    data += n;
    size -= n;
  }
}

}  // namespace

std::string_view format_name(TensorFormat f) { return f == TensorFormat::npy ? "npy" : "json"; }

std::optional<TensorFormat> parse_format_name(std::string_view name) {
  if (name == "npy") return TensorFormat::npy;
  if (name == "json") return TensorFormat::json;
  return std::nullopt;
}

InputBytes::InputBytes(InputBytes&&) noexcept = default;
InputBytes& InputBytes::operator=(InputBytes&&) noexcept = default;
InputBytes::~InputBytes() = default;

namespace {

constexpr std::size_t kReadChunk = 8 << 20;  // bounded reads, so that an interrupt is seen
constexpr std::size_t kHeadBytes = 4096;     // enough to tell .npy from JSON from neither

// Reads `size` bytes, or fewer at the end of the input.
std::size_t read_full(File& file, std::byte* dst, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    throw_if_interrupted();
    const std::size_t n = os_call(fmt::format("cannot read {}", quote_path(path)), [&] {
      return file.read({dst + done, std::min(size - done, kReadChunk)});
    });
    if (n == 0) break;
    done += n;
  }
  return done;
}

[[noreturn]] void file_shrank(std::uint64_t expected, std::uint64_t found) {
  throw Error(Errc::io, fmt::format("file shrank while reading: expected {} bytes, found {}", expected, found));
}

// Input over the JSON bound: if its first bytes are neither .npy nor JSON, that is the error.
[[noreturn]] void refuse_large(std::span<const std::byte> head, const std::string& has) {
  detect_format(head.subspan(0, std::min(head.size(), kHeadBytes)));
  fail_json_too_large(has);
}

}  // namespace

// Fills an InputBytes buffer from a file.
struct InputReader {
  File& fd;
  const std::string& path;
  InputBytes::Buffer& buf;

  // A regular file of `size` bytes (at open): the head first, so that a JSON file over the
  // bound is refused before its data is read; then exactly `size` bytes, fewer being an error.
  void read_file(std::uint64_t size) {
    read_head(size);
    read_rest(size);
  }

  void read_head(std::uint64_t size) {
    const std::size_t head = static_cast<std::size_t>(std::min<std::uint64_t>(size, kHeadBytes));
    buf.resize(head);
    const std::size_t got = read_full(fd, buf.data(), head, path);
    if (got < head) file_shrank(size, got);
    if (!is_npy(buf) && size > kMaxJsonInputBytes)
      refuse_large(buf, fmt::format("this file is {}", format_byte_size(size)));
  }

  void read_rest(std::uint64_t size) {
    const std::size_t head = buf.size();
    buf.resize(static_cast<std::size_t>(size));
    const std::size_t got = head + read_full(fd, buf.data() + head, buf.size() - head, path);
    if (got < size) file_shrank(size, got);
    // A file that grew since fstat is read on to its new end.
    std::byte probe;
    if (read_full(fd, &probe, 1, path) == 0) return;
    buf.push_back(probe);
    read_stream("the file grew past it while being read");
  }

  // An .npy regular file of `size` bytes after read_head(): the rest of a long header, then the
  // data straight into the tensor, with the same messages as reading the whole file into memory
  // and then read_npy gave. Leaves the header in `h`.
  Tensor read_npy_file(std::uint64_t size, NpyHeader& h) {
    if (buf.size() >= 10) {
      // parse_npy_header needs the whole header, or the whole file if that is shorter (its
      // "truncated header" message counts what the file has).
      const int major = std::to_integer<int>(buf[6]);
      std::size_t header_len = std::to_integer<std::size_t>(buf[8]) | (std::to_integer<std::size_t>(buf[9]) << 8);
      if (major != 1 && buf.size() >= 12)
        header_len |= (std::to_integer<std::size_t>(buf[10]) << 16) | (std::to_integer<std::size_t>(buf[11]) << 24);
      if (header_len <= kMaxNpyHeaderBytes) {  // otherwise parse_npy_header says so from the length
        const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(size, (major == 1 ? 10 : 12) + header_len));
        const std::size_t have = buf.size();
        if (want > have) {
          buf.resize(want);
          const std::size_t got = have + read_full(fd, buf.data() + have, want - have, path);
          if (got < want) file_shrank(size, got);
        }
      }
    }
    h = parse_npy_header(buf);                     // the buffer holds the file if it is shorter than the header says
    check_npy_data_size(h, size - h.data_offset);  // before the tensor is allocated
    os_call(fmt::format("cannot seek in {}", quote_path(path)), [&] { fd.seek(h.data_offset); });
    NpyDecoder decoder(h);
    for (std::size_t i = 0; i < decoder.pieces(); ++i) {
      const std::span<std::byte> piece = decoder.buffer(i);
      const std::size_t got = read_full(fd, piece.data(), piece.size(), path);
      if (got < piece.size()) file_shrank(size, h.data_offset + decoder.offset(i) + got);
      decoder.convert(i);
    }
    // A file that grew since fstat: counted to its new end (not kept) for the message.
    std::byte probe;
    if (read_full(fd, &probe, 1, path) != 0) {
      std::uint64_t more = 1;
      std::vector<std::byte> sink(1 << 16);
      while (const std::size_t n = read_full(fd, sink.data(), sink.size(), path)) more += n;
      check_npy_data_size(h, h.data_bytes + more);  // "trailing garbage"
    }
    return decoder.take();
  }

  // Appends the rest of a pipe (or of a growing file) up to its end; input that is not .npy
  // stops one byte past the JSON bound, so memory never holds much more than the bound.
  void read_stream(const std::string& has_more) {
    for (;;) {
      const bool bounded = buf.size() >= 6 && !is_npy(buf);
      if (bounded && buf.size() > kMaxJsonInputBytes) refuse_large(buf, has_more);
      std::size_t want = std::max<std::size_t>(buf.size(), std::size_t{1} << 16);
      if (bounded) {
        want = std::min<std::size_t>(want, kMaxJsonInputBytes + 1 - buf.size());
        // Text past the first read grows in place up to the bound: doubling would copy the
        // old buffer into one twice its size, holding three times the bound at the peak. The
        // allocator leaves the reserved pages untouched until data arrives in them.
        if (buf.size() >= (std::size_t{1} << 16) && buf.capacity() < kMaxJsonInputBytes + 1)
          buf.reserve(kMaxJsonInputBytes + 1);
      }
      const std::size_t used = buf.size();
      buf.resize(used + want);
      const std::size_t n = read_full(fd, buf.data() + used, want, path);
      buf.resize(used + n);
      if (n < want) {
        if (bounded && buf.size() > kMaxJsonInputBytes) refuse_large(buf, has_more);
        return;
      }
    }
  }
};

namespace {
// Opens `path` for reading ("-": standard input, which stays open), refuses a folder, and
// returns f(file, info, is_stdin); a file is closed however f ends.
template <class F>
auto with_input_fd(const std::string& path, F&& f) {
  const bool is_stdin = path == "-";
  File file =
      is_stdin ? File::standard_input()
               : os_call(fmt::format("cannot open {}", quote_path(path)), [&] { return File::open_for_reading(path); });
  const FileInfo info = os_call(fmt::format("cannot stat {}", quote_path(path)), [&] { return file.info(); });
  if (info.type == FileType::directory)
    io_fail(fmt::format("cannot read {}", quote_path(path)), std::make_error_code(std::errc::is_a_directory));
  return f(file, info, is_stdin);
}
}  // namespace

InputBytes InputBytes::open(const std::string& path) {
  return with_input_fd(path, [&](File& fd, const FileInfo& st, bool is_stdin) {
    InputBytes in;
    InputReader reader{fd, path, in.buffer_};
    // Standard input redirected from a file is read from where its offset stands, as a stream.
    if (st.type == FileType::regular && !is_stdin) reader.read_file(st.size);
    else reader.read_stream(is_stdin ? "standard input has more" : "the input has more");
    return in;
  });
}

InputContent read_input(const std::string& path) {
  return with_input_fd(path, [&](File& fd, const FileInfo& st, bool is_stdin) {
    InputContent out;
    InputBytes in;
    InputReader reader{fd, path, in.buffer_};
    // Standard input redirected from a file is read from where its offset stands, as a stream.
    if (st.type == FileType::regular && !is_stdin) {
      const auto size = st.size;
      reader.read_head(size);
      if (is_npy(in.buffer_)) {
        out.format = TensorFormat::npy;
        out.tensor = reader.read_npy_file(size, out.npy.emplace());
        return out;
      }
      reader.read_rest(size);
    } else {
      reader.read_stream(is_stdin ? "standard input has more" : "the input has more");
    }
    out.format = detect_format(in.bytes());
    if (out.format == TensorFormat::npy) {
      out.npy = inspect_npy(in.bytes());
      out.tensor = read_npy(in.bytes());
    } else {
      out.json = std::move(in);
    }
    return out;
  });
}

InputBytes InputBytes::read_rest_of_stdin(std::vector<std::byte> prefix) {
  InputBytes in;
  in.buffer_.assign(prefix.begin(), prefix.end());
  File input = File::standard_input();
  InputReader{input, "-", in.buffer_}.read_stream("standard input has more");
  return in;
}

TensorFormat detect_format(std::span<const std::byte> bytes) {
  if (is_npy(bytes)) return TensorFormat::npy;
  // A UTF-8 byte-order mark, which some Windows editors write, starts JSON text too (the JSON
  // parser skips it).
  if (bytes.size() >= 3 && bytes[0] == std::byte{0xEF} && bytes[1] == std::byte{0xBB} && bytes[2] == std::byte{0xBF})
    bytes = bytes.subspan(3);
  for (std::byte b : bytes) {
    const char c = static_cast<char>(b);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '[' || c == '{' || c == '-' || c == '"' || (c >= '0' && c <= '9')) return TensorFormat::json;
    break;
  }
  if (bytes.empty()) throw Error(Errc::invalid_input, "empty input (neither .npy nor JSON)");
  throw Error(Errc::invalid_input, "unrecognised format (neither .npy nor JSON)");
}

LoadedTensor read_tensor_bytes(std::span<const std::byte> bytes, const std::string& path, const ReadOptions& options) {
  return with_context(fmt::format("reading {}", quote_path(path)), [&] {
    LoadedTensor out;
    out.format = detect_format(bytes);
    if (out.format == TensorFormat::npy) {
      out.npy = inspect_npy(bytes);
      out.tensor = read_npy(bytes);
    } else {
      const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      out.tensor = read_json_tensor(text, JsonReadOptions{options.default_dtype});
    }
    return out;
  });
}

LoadedTensor read_tensor(const std::string& path, const ReadOptions& options) {
  InputContent in = with_context(fmt::format("reading {}", quote_path(path)), [&] { return read_input(path); });
  if (in.format == TensorFormat::npy) return LoadedTensor{std::move(in.tensor), TensorFormat::npy, in.npy};
  return read_tensor_bytes(in.json->bytes(), path, options);
}

InputSummary inspect_input(const std::string& path) {
  // The context covers opening too, so that info words "cannot open" and "Is a directory" as
  // the operator commands do ("reading 'd': cannot read 'd': Is a directory").
  return with_context(fmt::format("reading {}", quote_path(path)), [&] {
    return with_input_fd(path, [&](File& fd, const FileInfo& st, bool is_stdin) {
      InputSummary out;
      InputBytes in;
      InputReader reader{fd, path, in.buffer_};
      // The magic, version and header length: 12 bytes, or the whole input if shorter.
      in.buffer_.resize(12);
      in.buffer_.resize(read_full(fd, in.buffer_.data(), in.buffer_.size(), path));
      const bool regular = st.type == FileType::regular && !is_stdin;
      if (!is_npy(in.buffer_)) {
        if (regular) {  // from the start, as InputBytes::open reads it: the JSON bound from the size
          os_call(fmt::format("cannot seek in {}", quote_path(path)), [&] { fd.seek(0); });
          in.buffer_.clear();
          reader.read_file(st.size);
        } else {
          reader.read_stream(is_stdin ? "standard input has more" : "the input has more");
        }
        out.format = detect_format(in.bytes());
        out.json = std::move(in);
        return out;
      }
      // An .npy header, then only the data's length.
      if (in.buffer_.size() < 10) parse_npy_header(in.bytes());  // "truncated header"
      const int major = std::to_integer<int>(in.buffer_[6]);
      std::size_t header_len =
          std::to_integer<std::size_t>(in.buffer_[8]) | (std::to_integer<std::size_t>(in.buffer_[9]) << 8);
      if (major != 1 && in.buffer_.size() >= 12)
        header_len |=
            (std::to_integer<std::size_t>(in.buffer_[10]) << 16) | (std::to_integer<std::size_t>(in.buffer_[11]) << 24);
      if (header_len <= kMaxNpyHeaderBytes) {  // otherwise parse_npy_header says so from the length
        const std::size_t want = (major == 1 ? 10 : 12) + header_len;
        const std::size_t have = in.buffer_.size();
        if (want > have) {
          in.buffer_.resize(want);
          in.buffer_.resize(have + read_full(fd, in.buffer_.data() + have, want - have, path));
        }
      }
      const NpyHeader h = parse_npy_header(in.bytes());
      std::uint64_t found = in.buffer_.size() - h.data_offset;
      if (regular) {
        const auto size = st.size;
        found = size > h.data_offset ? size - h.data_offset : 0;
      } else {
        // A pipe: count the rest without keeping it.
        std::vector<std::byte> sink(1 << 16);
        while (const std::size_t n = read_full(fd, sink.data(), sink.size(), path)) found += n;
      }
      check_npy_data_size(h, found);
      out.format = TensorFormat::npy;
      out.npy = h;
      return out;
    });
  });
}

std::optional<TensorFormat> format_from_extension(std::string_view path) {
  auto ends_with = [&](std::string_view ext) {
    if (path.size() < ext.size()) return false;
    for (std::size_t i = 0; i < ext.size(); ++i)
      if (std::tolower(static_cast<unsigned char>(path[path.size() - ext.size() + i])) != ext[i]) return false;
    return true;
  };
  if (ends_with(".npy")) return TensorFormat::npy;
  if (ends_with(".json")) return TensorFormat::json;
  return std::nullopt;
}

namespace {
std::atomic<bool> sync_outputs{false};
std::mutex named_reason_mutex;
std::string named_reason;  // the last reason an output needed a named temporary file
}  // namespace

void set_sync_outputs(bool sync) { sync_outputs = sync; }

std::string named_temporary_reason() {
  std::lock_guard lock(named_reason_mutex);
  return named_reason;
}

bool writes_in_place(const std::string& path) { return path == "-" || is_device_or_pipe(path); }

OutputFile::OutputFile(std::string path) : path_(std::move(path)), file_(std::make_unique<File>()) {
  with_context(fmt::format("writing {}", path_ == "-" ? std::string("standard output") : quote_path(path_)), [&] {
    if (path_ == "-") {
      *file_ = File::standard_output();
      return;
    }
    if (path_.empty() || path_.back() == '/')
      io_fail("not a file name", std::make_error_code(std::errc::is_a_directory));
    if (names_open_descriptor(path_)) {
      // /dev/stdout, /dev/fd/N: the open file itself is written, as cp and tee do, never the
      // link replaced. Standard output's own file is written through standard output, so that
      // what else goes there (and >> appending) keeps its order.
      if (is_standard_output(path_)) *file_ = File::standard_output();
      else *file_ = os_call("cannot open", [&] { return File::open_existing_for_writing(path_, true); });
      return;
    }
    if (const auto st = file_info(path_); st && st->type != FileType::regular) {
      // A device or FIFO (/dev/null, a named pipe) is written in place: it cannot be renamed over.
      *file_ = os_call("cannot open", [&] { return File::open_existing_for_writing(path_); });
      return;
    }
    PendingFile pending =
        os_call(cannot_create_message(path_, directory_of(path_), "cannot create a temporary file in"),
                [&] { return PendingFile::create(path_); });
    if (!pending.named_because().empty()) {
      std::lock_guard lock(named_reason_mutex);
      named_reason = pending.named_because();
    }
    pending_ = std::make_unique<PendingFile>(std::move(pending));
  });
}

void check_output_path(const std::string& path) {
  if (path == "-") return;
  with_context(fmt::format("writing {}", quote_path(path)), [&] {
    if (path.empty() || path.back() == '/') io_fail("not a file name", std::make_error_code(std::errc::is_a_directory));
    std::error_code error;
    if (names_open_descriptor(path)) {  // /dev/stdout and the like: opened in place
      if (!is_standard_output(path) && !can_write_file(path, error)) io_fail("cannot open", error);
      return;
    }
    if (const auto st = file_info(path, error)) {
      if (st->type == FileType::directory) io_fail("cannot write", std::make_error_code(std::errc::is_a_directory));
      if (st->type != FileType::regular) {  // a device or FIFO is opened in place
        if (!can_write_file(path, error)) io_fail("cannot open", error);
        return;
      }
    }
    // A new or replaced file is created in its folder, which must exist and be writable.
    const std::string dir = directory_of(path);
    const std::string cannot_create = fmt::format("cannot create a file in '{}'", dir);
    const auto dst = file_info(dir, error);
    if (!dst) io_fail(cannot_create, error);
    if (dst->type != FileType::directory) io_fail(cannot_create, std::make_error_code(std::errc::not_a_directory));
    if (!can_create_in(dir, error)) io_fail(cannot_create_message(path, dir, "cannot create a file in"), error);
  });
}

OutputFile::~OutputFile() = default;  // an uncommitted PendingFile discards itself

File& OutputFile::file() { return pending_ ? pending_->file() : *file_; }

void OutputFile::write(std::span<const std::byte> data) {
  with_context(fmt::format("writing {}", path_ == "-" ? std::string("standard output") : quote_path(path_)),
               [&] { write_all(file(), data.data(), data.size()); });
}

void OutputFile::write_at(std::uint64_t offset, std::span<const std::byte> data) {
  with_context(fmt::format("writing {}", quote_path(path_)), [&] {
    if (!pending_) throw Error(Errc::internal, "write_at on an output written in order");
    // No interrupt check here, unlike write(): the threads of a streamed run check between chunks
    // (each at most 512 KiB), so that an interrupt reads "interrupted" whichever thread sees it,
    // not "writing 'OUT': interrupted" when the second thread was about to write.
    while (!data.empty()) {
      std::size_t n = 0;
      try {
        n = pending_->file().write_at(offset, data);
      } catch (const std::system_error& e) {
        io_fail("write failed", e.code());
      }
      offset += n;
      data = data.subspan(n);
    }
  });
}

void OutputFile::commit() {
  with_context(fmt::format("writing {}", path_ == "-" ? std::string("standard output") : quote_path(path_)), [&] {
    if (!pending_) return;  // standard output or a device: nothing to name
    // Without --sync, like cp and sed -i: atomic for readers and against dmlbits dying, not
    // durable across a power cut, which would cost a disk flush per run.
    try {
      pending_->commit(sync_outputs);
    } catch (const std::system_error& e) {
      throw Error(Errc::io, e.what());  // "cannot rename the temporary file into place: ..."
    }
    // Windows learns only here whether the file could be named without a window (files.hpp).
    if (!pending_->named_because().empty()) {
      std::lock_guard lock(named_reason_mutex);
      named_reason = pending_->named_because();
    }
  });
}

bool path_exists(const std::string& path) { return file_info(path).has_value(); }

bool is_device_or_pipe(const std::string& path) {
  if (names_open_descriptor(path)) return true;  // /dev/stdout: whatever it is, written in place
  const auto st = file_info(path);
  return st && st->type == FileType::other;
}

std::unique_ptr<OutputFile> prepare_text_file(const std::string& path, std::string_view text) {
  auto out = std::make_unique<OutputFile>(path);
  out->write(text);
  return out;
}

void write_text_file(const std::string& path, std::string_view text) { prepare_text_file(path, text)->commit(); }

struct PendingOutputs::Files {
  std::vector<std::unique_ptr<OutputFile>> list;
};

PendingOutputs::PendingOutputs() : files_(std::make_unique<Files>()) {}
PendingOutputs::PendingOutputs(PendingOutputs&&) noexcept = default;
PendingOutputs& PendingOutputs::operator=(PendingOutputs&&) noexcept = default;
PendingOutputs::~PendingOutputs() = default;  // each uncommitted OutputFile discards itself

void PendingOutputs::add_text(const std::string& path, std::string_view text) {
  if (!files_) files_ = std::make_unique<Files>();  // moved from
  files_->list.push_back(prepare_text_file(path, text));
}

void PendingOutputs::add_tensor(const TensorView& t, const std::string& path, TensorFormat format) {
  if (!files_) files_ = std::make_unique<Files>();
  files_->list.push_back(prepare_tensor_file(t, path, format));
}

void PendingOutputs::commit() {
  if (!files_) return;
  std::vector<std::unique_ptr<OutputFile>> files = std::move(files_->list);
  files_->list.clear();
  for (auto& f : files) f->commit();
}

Tensor read_tensor_file(const std::string& path, std::optional<DType> json_dtype) {
  ReadOptions options;
  options.default_dtype = json_dtype;
  return std::move(read_tensor(path, options).tensor);
}

void write_tensor_file(const TensorView& t, const std::string& path, TensorFormat format, bool json_hex) {
  write_tensor(t, path, format, JsonWriteOptions{json_hex});
}

std::unique_ptr<OutputFile> prepare_tensor_file(const TensorView& t, const std::string& path, TensorFormat format,
                                                const JsonWriteOptions& json) {
  auto out = std::make_unique<OutputFile>(path);
  if (format == TensorFormat::npy) {
    out->write(npy_header(t.dtype, t.shape));
    out->write(t.bytes());
  } else {
    out->write(write_json_tensor(t, json));
  }
  return out;
}

void write_tensor(const TensorView& t, const std::string& path, TensorFormat format, const JsonWriteOptions& json) {
  prepare_tensor_file(t, path, format, json)->commit();
}

}  // namespace dmlbits

namespace dmlbits {

TensorFileInfo inspect_tensor_file(const std::string& path, std::optional<DType> dtype, bool parse_json) {
  // An .npy file's header only: its data is never read (so its size costs nothing).
  const InputSummary in = inspect_input(path);
  return with_context(fmt::format("reading {}", quote_path(path)), [&] {
    TensorFileInfo f;
    f.path = path;
    f.format = in.format;
    if (f.format == TensorFormat::npy) {
      const NpyHeader& h = *in.npy;
      f.version = fmt::format("{}.{}", h.major, h.minor);
      f.dtype = h.dtype;
      f.descr = h.descr;
      f.is_bool = h.is_bool;
      f.shape = h.shape;
      f.fortran_order = h.fortran_order;
      f.header_bytes = h.data_offset;
      switch (h.byte_order) {
        case '<':
          f.byte_order = "little";
          break;
        case '>':
          f.byte_order = "big";
          break;
        default:
          f.byte_order = "native";
          break;  // '=', or '|' on a multi-byte type, as NumPy reads it
      }
      if (dtype_info(h.dtype).size == 1) f.byte_order = "not applicable";
    } else if (parse_json) {
      const std::string_view text(reinterpret_cast<const char*>(in.json->bytes().data()), in.json->bytes().size());
      auto doc = JsonTensorDocument::parse(text);
      f.dtype = doc.declared_dtype();
      if (!f.dtype) f.dtype = dtype;
      if (f.dtype) {
        f.shape = doc.to_tensor(f.dtype).shape();
      } else {
        // Without a dtype the values cannot be checked, but the shape is known.
        f.shape = doc.to_tensor(DType::float64).shape();
      }
      f.byte_order = "not applicable";
    } else {
      f.byte_order = "not applicable";
    }
    return f;
  });
}

}  // namespace dmlbits
