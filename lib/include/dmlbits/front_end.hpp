// For front ends (the dmlbits command; a binding that is a program of its own), not part of the
// operation API, which dmlbits/dmlbits.hpp gathers: what a command-line program needs of its
// process (signals, standard streams, its arguments) and of the files it names besides an
// operation's own (probes before anything is written, side outputs named with the result), and
// the one formatter of byte sizes that the library's messages and the front ends' listings share.
// It includes no other header: each layer of the library (lib/CMakeLists.txt) implements its part.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace dmlbits {

// The edit distance of two words (insertions, deletions and substitutions of one byte each): the
// "did you mean" of an unknown command (the command line) and of an unknown function (expressions).
std::size_t edit_distance(std::string_view a, std::string_view b);

struct TensorView;        // dmlbits/tensor.hpp
class Operation;          // dmlbits/request.hpp
struct DxDispatchFiles;   // dmlbits/request.hpp
enum class TensorFormat;  // dmlbits/tensor.hpp

// The process (lib/src/platform: signals.cpp, standard_streams.cpp and their Windows versions).

// For main(), once, before any thread starts: SIGINT and SIGTERM call request_interrupt()
// (dmlbits/error.hpp), and a second one ends the process at once; SIGPIPE is ignored, so that
// a reader that closed its pipe (`| head`) is seen as an error from the write
// (std::errc::broken_pipe), after which dmlbits removes its temporary files and exits 141
// quietly, as a tool ended by SIGPIPE would. (A Windows build installs a console control handler.)
void install_interrupt_handlers();

// Whether standard error is a terminal: a progress line is shown only on one.
bool standard_error_is_terminal() noexcept;

// Writes all of `data` to standard output, retrying interrupted writes, and returns the first
// failure (empty on success): a reader that closed its pipe compares equal to
// std::errc::broken_pipe; anything else is an I/O error whose message() says why. Bypasses
// the C and C++ libraries' buffers, so that the failure's reason is not lost.
std::error_code write_standard_output(std::string_view data) noexcept;

// The program's arguments as UTF-8, argv[0] first. On POSIX, main's own; on Windows, the
// command line as the system keeps it (UTF-16), converted, since main's argv holds only what
// the ANSI code page can spell (a file name in another script arrives as '?').
std::vector<std::string> command_line_arguments(int argc, char** argv);

// A command's files (lib/src/io/io.cpp).

// Whether every output written from now on, an operation's or a side output, is flushed with
// its folder entry to the disk (fsync) before it takes its name: --sync. Off by default, as for
// cp. Process-wide.
void set_sync_outputs(bool sync);

// Why the last output of this process that needed one was written under a temporary name
// (the file system has no unnamed files); empty if none did. For -v.
std::string named_temporary_reason();

// Whether an output at `path` is written in place rather than replaced: "-", a device, a
// FIFO, or a kernel's link to an open file (/dev/stdout, /dev/fd/N).
bool writes_in_place(const std::string& path);

// Throws the Errc::io error that writing `path` would meet at its start, without creating
// anything: a folder, a missing or read-only folder, a device that cannot be opened. Called for
// every output before an operation computes, so that a bad side-output path does not leave the
// main output written and the run's outcome hidden behind an I/O error.
void check_output_path(const std::string& path);

// Whether something exists at `path` (a file by that name is read, not taken for a literal).
bool path_exists(const std::string& path);

// Writes `text` to `path` atomically, as every output is written (reports, JUnit XML).
void write_text_file(const std::string& path, std::string_view text);

// Files written now and named later, all at once: how a front end keeps a run's side outputs
// (--explain-json, --time-json, a DxDispatch model: prepare_dxdispatch_model below)
// unseen until the run's result is written, so that a run that fails (a full disk, an
// interrupt, an input found short while it is read) leaves none of them.
//
// Each file is written complete when added, under no name (an unnamed file where the system
// has them, else a temporary name, as every output: write_tensor_file), and commit() names them
// in the order added. Destroyed uncommitted, they leave nothing. A target written in place
// (standard output, a device, a FIFO: writes_in_place) cannot wait unseen: it is written when
// added, so that its failure, too, comes before anything is named.
class PendingOutputs {
 public:
  PendingOutputs();
  PendingOutputs(PendingOutputs&&) noexcept;
  PendingOutputs& operator=(PendingOutputs&&) noexcept;
  ~PendingOutputs();  // discards what was not committed

  // Errc::io "writing 'PATH': ..." if the file cannot be created or written.
  void add_text(const std::string& path, std::string_view text);
  void add_tensor(const TensorView& t, const std::string& path, TensorFormat format);
  // Names every file, in the order added, and empties the set. If one fails (Errc::io), those
  // before it keep their names and the rest are discarded.
  void commit();

 private:
  struct Files;  // the files, complete and unnamed (lib/src/io/io.cpp)
  std::unique_ptr<Files> files_;
};

// --emit-dxdispatch's files (FILE-a.npy[, FILE-b.npy], each `inputs[i]` as .npy, then the model
// FILE.json: request.hpp, dxdispatch_file_names) added to `into`, named when the caller commits
// it: the command line names them once the run's result is written. If it throws, `into` may
// hold some of them: drop it. `inputs` are the tensors `op` was validated for. A run in place has
// overwritten A in memory before RunHooks::before_write (where a face calls this) but not yet in
// its file: `reread_a` names that file, and A is read from it again ("" = use inputs[0]). For an
// expression's Operation, the files are FILE-NAME.npy per operand (`inputs` in the order of the
// expression's names, as RunHooks::before_write gives them) and the model runs the graph node by
// node (lib/src/run/dxdispatch.hpp, dxdispatch_graph_model).
DxDispatchFiles prepare_dxdispatch_model(PendingOutputs& into, const std::string& file, const Operation& op,
                                         const std::vector<TensorView>& inputs, const std::string& reread_a = "");

}  // namespace dmlbits
