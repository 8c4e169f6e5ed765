// How a backend that moves its own transfers (Backend::run_staged) reaches a streamed run's
// operands and output: it asks for input bytes straight into memory of its own (a mapped upload
// heap) and hands output bytes straight from memory of its own (a mapped readback heap), so no
// chunk buffer stands between the files and the device. The stream layer (run/stream.cpp)
// implements it over the run's operands and output file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace dmlbits {

class StagedIo {
 public:
  virtual ~StagedIo() = default;
  // Whether read_input may be called from several threads at once, for disjoint ranges: every
  // streamed input is a regular file read at offsets. Otherwise each input is read in order of
  // `first`, from the thread that called run_staged.
  virtual bool concurrent_reads() const = 0;
  // Whether write_output may be called from several threads at once, for disjoint ranges and in
  // any order: the output is a new file written at offsets. Otherwise it is called in order of
  // `first`, each element once, from the thread that called run_staged.
  virtual bool concurrent_writes() const = 0;
  // Fills `dst` with input `i`'s elements [first, first + dst.size() / element size), in C order.
  // An input of one element (broadcast) is read as `first` 0 and one element.
  virtual void read_input(std::size_t i, std::uint64_t first, std::span<std::byte> dst) = 0;
  // Writes output elements [first, first + src.size() / element size) at their place.
  virtual void write_output(std::uint64_t first, std::span<const std::byte> src) = 0;
  // Called on the thread that called run_staged once the output's first `done` elements are all
  // written, after each piece: may throw to stop the run (an interrupt, a progress callback).
  virtual void written(std::uint64_t done) = 0;
};

}  // namespace dmlbits
