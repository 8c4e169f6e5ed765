// The files one command reads and writes, checked before anything is read or written: two
// outputs, or an output and an input, golden or manifest, must not be one file. Without this
// check the last write wins: `--report-json g.npy --expect g.npy` turns the golden into the
// report, `-o r.npy --time-json r.npy` loses the result, and two writers of standard output mix
// a tensor with JSON. Every face (the command line, a binding) builds its list and calls
// check_file_uses() first.
#pragma once

#include <string>
#include <vector>

namespace dmlbits {

struct FileUse {
  std::string path;    // as given; "-" is standard input when read, standard output when written
  std::string name;    // how a message names the use: "-o", "--time-json", "input A", "manifest"
  bool written = false;
  bool operand = false;   // an input of the operation (its A or B)
  bool in_place = false;  // a write that replaces the operation's inputs by design (--in-place)
};

// Throws Error(Errc::usage) naming the first two uses, in list order, that are the same file
// while at least one of them writes it: the same path once resolved (links, `.` and `..`; on
// Windows without regard to case), the same file by identity (device and inode; on Windows the
// volume and file index), or standard output written twice. Standard input read and standard
// output written are two streams; reads alone never clash; the null device (/dev/null, NUL)
// takes any number of writes; an in_place write may be the same file as any operand.
void check_file_uses(const std::vector<FileUse>& uses);

}  // namespace dmlbits
