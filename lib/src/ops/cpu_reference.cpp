#include "cpu_reference.hpp"

#include <array>
#include <cstring>

#include "dmlbits/error.hpp"

namespace dmlbits {
namespace {

template <class T>
T load(const std::byte* base, std::uint64_t index) {
  T v;
  std::memcpy(&v, base + index * sizeof(T), sizeof(T));
  return v;
}

template <class T>
void store(std::byte* base, std::uint64_t index, T v) {
  std::memcpy(base + index * sizeof(T), &v, sizeof(T));
}

// Visits every element of the output in row-major order, with each input's element index from
// its descriptor's strides. f(out_index, in_index[0], in_index[1]).
template <class F>
void for_each_element(const DmlOperatorDesc& d, F&& f) {
  const auto& sizes = d.output.sizes;
  const std::size_t rank = sizes.size();
  const std::size_t n_in = d.inputs.size();
  std::array<std::uint64_t, kMaxRank> idx{};
  std::array<std::uint64_t, 2> off{};
  const std::uint64_t count = d.output.element_count();
  for (std::uint64_t out = 0; out < count; ++out) {
    f(out, off[0], off[1]);
    for (std::size_t k = rank; k-- > 0;) {
      for (std::size_t i = 0; i < n_in; ++i) off[i] += d.inputs[i].strides[k];
      if (++idx[k] < sizes[k]) break;
      for (std::size_t i = 0; i < n_in; ++i) off[i] -= d.inputs[i].strides[k] * sizes[k];
      idx[k] = 0;
    }
  }
}

template <class T>
void run_width(const ValidatedOp& v, const ExecuteBuffers& b) {
  const DmlOperatorDesc& d = v.desc();
  const std::byte* a = b.inputs[0].data();
  std::byte* out = b.output.data();
  switch (d.op) {
    case OpKind::bit_not:
      for_each_element(d, [&](std::uint64_t o, std::uint64_t i, std::uint64_t) {
        store<T>(out, o, reference_not(load<T>(a, i)));
      });
      return;
    case OpKind::popcount:
      if (d.output.dtype == DType::uint32) {
        for_each_element(d, [&](std::uint64_t o, std::uint64_t i, std::uint64_t) {
          store<std::uint32_t>(out, o, reference_popcount(load<T>(a, i)));
        });
      } else {
        for_each_element(d, [&](std::uint64_t o, std::uint64_t i, std::uint64_t) {
          store<std::uint8_t>(out, o, static_cast<std::uint8_t>(reference_popcount(load<T>(a, i))));
        });
      }
      return;
    default: {
      const std::byte* bb = b.inputs[1].data();
      const OpKind op = d.op;
      const ShiftOverflow mode = d.shift_overflow;
      for_each_element(d, [&](std::uint64_t o, std::uint64_t i, std::uint64_t j) {
        store<T>(out, o, reference_binary<T>(op, load<T>(a, i), load<T>(bb, j), mode));
      });
      return;
    }
  }
}

}  // namespace

void CpuReferenceBackend::run(const ValidatedOp& op, const ExecuteBuffers& buffers) {
  if (op.desc().empty) return;
  switch (dtype_info(op.input_dtype()).size) {
    case 1: return run_width<std::uint8_t>(op, buffers);
    case 2: return run_width<std::uint16_t>(op, buffers);
    case 4: return run_width<std::uint32_t>(op, buffers);
    case 8: return run_width<std::uint64_t>(op, buffers);
    default: throw Error(Errc::internal, "unexpected element size");
  }
}

}  // namespace dmlbits
