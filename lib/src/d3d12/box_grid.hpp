// How a strided operation is cut into boxes that each fit one buffer (d3d12_backend.cpp's
// header comment explains the scheme): the outer dimensions fixed, a run of rows along one
// dimension, the inner dimensions whole. Shared by the d3d12 and directml backends.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace dmlbits {

// How a strided run is cut into boxes: split at the outermost dimension `split` whose inner
// block fits in one dispatch, `rows` of that dimension per box, the outer dimensions fixed.
struct BoxGrid {
  std::vector<std::uint64_t> sizes;  // the output's
  std::size_t split = 0;
  std::uint64_t rows = 0;
  std::vector<std::uint64_t> out_strides;  // the packed output's, in elements

  BoxGrid(const std::vector<std::uint64_t>& s, std::uint64_t total, std::uint64_t max_elems) : sizes(s) {
    const std::size_t rank = s.size();
    std::uint64_t inner = total;  // elements of dimensions split+1.. (or all when one box fits)
    if (total > max_elems) {
      split = rank - 1;
      inner = 1;
      while (split > 0 && inner * s[split] <= max_elems) {
        inner *= s[split];
        --split;
      }
    }
    rows = total > max_elems ? std::max<std::uint64_t>(1, max_elems / inner) : s[0];
    out_strides.assign(rank, 1);
    for (std::size_t i = rank - 1; i > 0; --i) out_strides[i - 1] = out_strides[i] * s[i];
  }

  // Moves `index`, a box's first element, to the next box's: along `split` by the `r` rows of
  // the box, then carrying into the outer dimensions. False after the last box.
  bool advance(std::vector<std::uint64_t>& index, std::uint64_t r) const {
    index[split] += r;
    std::size_t i = split;
    while (index[i] >= sizes[i]) {
      if (i == 0) return false;
      index[i] = 0;
      ++index[--i];
    }
    return true;
  }
};

}  // namespace dmlbits
