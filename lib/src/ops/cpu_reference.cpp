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

// Every operator through its reference function: In and Out are the unsigned integers of the
// input and output element widths.
template <class In, class Out>
void run_typed(const ValidatedOp& v, const ExecuteBuffers& b) {
  const DmlOperatorDesc& d = v.desc();
  const ReferenceFn f = v.op().reference;
  const ShiftOverflow mode = d.shift_overflow;
  const std::byte* a = b.inputs[0].data();
  const std::byte* bb = b.inputs.size() > 1 ? b.inputs[1].data() : nullptr;
  std::byte* out = b.output.data();
  for_each_element(d, [&](std::uint64_t o, std::uint64_t i, std::uint64_t j) {
    const std::uint64_t rhs = bb ? load<In>(bb, j) : 0;
    store<Out>(out, o, static_cast<Out>(f(load<In>(a, i), rhs, sizeof(In) * 8, mode)));
  });
}

template <class In>
void run_width(const ValidatedOp& v, const ExecuteBuffers& b) {
  switch (dtype_info(v.output_dtype()).size) {
    case 1:
      return run_typed<In, std::uint8_t>(v, b);
    case 2:
      return run_typed<In, std::uint16_t>(v, b);
    case 4:
      return run_typed<In, std::uint32_t>(v, b);
    case 8:
      return run_typed<In, std::uint64_t>(v, b);
    default:
      throw Error(Errc::internal, "unexpected element size");
  }
}

}  // namespace

void CpuReferenceBackend::run(const ValidatedOp& op, const ExecuteBuffers& buffers) {
  if (op.desc().empty) return;
  switch (dtype_info(op.input_dtype()).size) {
    case 1:
      return run_width<std::uint8_t>(op, buffers);
    case 2:
      return run_width<std::uint16_t>(op, buffers);
    case 4:
      return run_width<std::uint32_t>(op, buffers);
    case 8:
      return run_width<std::uint64_t>(op, buffers);
    default:
      throw Error(Errc::internal, "unexpected element size");
  }
}

}  // namespace dmlbits
