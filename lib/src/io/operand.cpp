#include "operand.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "byte_swap.hpp"
#include "dmlbits/error.hpp"
#include "npy_stream.hpp"

namespace dmlbits {

DType LoadedOperand::dtype() const {
  return stream                                           ? stream->header().dtype
         : kind == OperandKind::borrowed && borrowed.data ? borrowed.dtype
                                                          : tensor.dtype();
}

Shape LoadedOperand::shape() const {
  return stream                                           ? stream->header().shape
         : kind == OperandKind::borrowed && borrowed.data ? borrowed.shape
                                                          : tensor.shape();
}

TensorView LoadedOperand::view() const {
  if (kind == OperandKind::borrowed && borrowed.data) return {borrowed.dtype, borrowed.shape, borrowed.data};
  return tensor.view();
}

std::byte* LoadedOperand::writable_data() {
  if (kind == OperandKind::borrowed && borrowed.data) return borrowed.writable;
  return tensor.data();
}

namespace {

// What each operand holds before dtypes are resolved.
struct Pending {
  OperandKind kind{};
  std::string text;
  std::optional<InputBytes> bytes;
  std::optional<Tensor> tensor;       // .npy, or JSON with a dtype
  std::shared_ptr<NpyStream> stream;  // .npy left unread (LoadMode::streams)
  TensorFormat format = TensorFormat::npy;
  std::optional<JsonTensorDocument> document;  // JSON (file or array literal)
  const BorrowedTensor* borrowed = nullptr;    // OperandKind::borrowed
};

// `n` elements of U, `stride` bytes apart from `src`, to consecutive places from `dst`, swapped
// when Swap. One loop per element size and swap: element by element through a memcpy of the
// size, the conversion took 3.5 times as long as NumPy's own copy (issue 37).
template <class U, bool Swap>
U load_element(const std::byte* p) {
  U v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (Swap) v = byte_swapped(v);
  return v;
}

template <class U, bool Swap>
void gather_run(const std::byte* src, std::int64_t stride, std::uint64_t n, std::byte* dst) {
  if (stride == static_cast<std::int64_t>(sizeof(U))) {  // contiguous: only swapped (or copied)
    if constexpr (Swap) copy_swapped<U>(src, dst, n);
    else std::memcpy(dst, src, n * sizeof(U));
    return;
  }
  // Four at a time: the loads are independent, and the loop's own work is a quarter.
  std::uint64_t i = 0;
  for (; i + 4 <= n; i += 4, src += 4 * stride) {
    const U v[4] = {load_element<U, Swap>(src), load_element<U, Swap>(src + stride),
                    load_element<U, Swap>(src + 2 * stride), load_element<U, Swap>(src + 3 * stride)};
    std::memcpy(dst + i * sizeof(U), v, sizeof v);
  }
  for (; i < n; ++i, src += stride) {
    const U v = load_element<U, Swap>(src);
    std::memcpy(dst + i * sizeof(U), &v, sizeof v);
  }
}

using GatherRun = void (*)(const std::byte*, std::int64_t, std::uint64_t, std::byte*);

GatherRun gather_for(std::size_t size, bool swap) {
  switch (size) {
    case 1:
      return &gather_run<std::uint8_t, false>;
    case 2:
      return swap ? &gather_run<std::uint16_t, true> : &gather_run<std::uint16_t, false>;
    case 4:
      return swap ? &gather_run<std::uint32_t, true> : &gather_run<std::uint32_t, false>;
    default:
      return swap ? &gather_run<std::uint64_t, true> : &gather_run<std::uint64_t, false>;
  }
}

// Elements [first, first + count) of borrowed `b` in C order, converted to C order and native
// byte order into `dst`: a run along the last dimension at a time.
void convert_range(const BorrowedTensor& b, std::uint64_t first, std::uint64_t count, std::byte* dst) {
  const std::size_t rank = b.shape.rank();
  if (!b.strides.empty() && b.strides.size() != rank)
    throw Error(Errc::invalid_input,
                fmt::format("{} strides given for a tensor of {} dimensions", b.strides.size(), rank));
  const std::size_t size = dtype_info(b.dtype).size;
  const GatherRun gather = gather_for(size, b.byte_swapped);
  if (count == 0) return;
  if (rank == 0) {
    gather(b.data, 0, 1, dst);
    return;
  }
  std::array<std::int64_t, kMaxRank> strides{};
  std::array<std::uint64_t, kMaxRank> index{};
  std::int64_t step = static_cast<std::int64_t>(size);
  for (std::size_t d = rank; d-- > 0;) {
    strides[d] = b.strides.empty() ? step : b.strides[d];
    step *= static_cast<std::int64_t>(b.shape[d]);
  }
  for (std::size_t d = rank; d-- > 0;) {  // the C-order index of element `first`
    index[d] = first % b.shape[d];
    first /= b.shape[d];
  }
  const std::size_t last = rank - 1;
  while (count > 0) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d < rank; ++d) offset += static_cast<std::int64_t>(index[d]) * strides[d];
    const std::uint64_t n = std::min(count, b.shape[last] - index[last]);
    gather(b.data + offset, strides[last], n, dst);
    dst += n * size;
    count -= n;
    index[last] += n;
    for (std::size_t d = last; d > 0 && index[d] == b.shape[d]; --d) {  // carry into the dimensions before
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

// A borrowed tensor in another layout or byte order, converted whole.
Tensor copy_to_c_order(const BorrowedTensor& b) {
  Tensor t(b.dtype, b.shape);
  convert_range(b, 0, t.element_count(), t.data());
  return t;
}

std::string operand_context(std::size_t index, const Pending& p) {
  switch (p.kind) {
    case OperandKind::file:
    case OperandKind::standard_input:
      return fmt::format("reading {}", quote_path(p.text));
    case OperandKind::borrowed:
      return fmt::format("operand {}", static_cast<char>('A' + index));
    default: {
      // A literal can be as long as a command line; quote enough of it to recognise it.
      const bool long_text = p.text.size() > 40;
      // A and B, as the help and the manual name the operands.
      return fmt::format("operand {} (literal '{}{}')", static_cast<char>('A' + index),
                         p.text.substr(0, long_text ? 32 : 40),
                         long_text ? fmt::format("... ({} characters)", p.text.size()) : std::string());
    }
  }
}

// -?(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+), matched by hand: std::regex recurses once per
// character and overflowed the stack on a long operand (a 50000-digit argument crashed).
bool is_integer_literal(std::string_view s) {
  if (s.starts_with('-')) s.remove_prefix(1);
  const auto all_of = [](std::string_view digits, auto pred) {
    if (digits.empty()) return false;
    for (char c : digits)
      if (!pred(static_cast<unsigned char>(c))) return false;
    return true;
  };
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
    return all_of(s.substr(2), [](unsigned char c) {
      return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    });
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
    return all_of(s.substr(2), [](unsigned char c) { return c == '0' || c == '1'; });
  return all_of(s, [](unsigned char c) { return c >= '0' && c <= '9'; });
}

// Runs f(); an Error escaping it gets the operand's context. The context is formatted only
// then: a small in-memory call (the Python module's) spent more on formatting "operand A" for
// every operand than on reading its operands.
template <class F>
void with_operand_context(std::size_t index, const Pending& p, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    rethrow_with_context(e, operand_context(index, p));
  }
}

}  // namespace

OperandKind classify_operand(const std::string& text) {
  if (text == "-") return OperandKind::standard_input;
  if (is_integer_literal(text)) return OperandKind::scalar_literal;
  if (!text.empty() && text.front() == '[') return OperandKind::array_literal;
  return OperandKind::file;
}

void LoadedOperand::materialize() {
  if (converts()) {
    tensor = copy_to_c_order(borrowed);
    borrowed = {};  // the operand is its tensor now
  }
  if (!stream) return;
  tensor = stream->read_all();
  stream.reset();
}

std::span<const std::byte> LoadedOperand::chunk(std::uint64_t first, std::size_t count, std::byte* scratch) const {
  const std::size_t size = dtype_info(dtype()).size;
  const std::uint64_t elements = shape().element_count();
  if (elements == 1 && converts()) {
    convert_range(borrowed, 0, 1, scratch);
    return {scratch, size};
  }
  if (elements == 1 && !stream) return {view().data, size};
  if (first > elements || count > elements - first)
    throw Error(Errc::internal,
                fmt::format("chunk [{}, {}) of an operand of {} elements", first, first + count, elements));
  if (converts()) {
    convert_range(borrowed, first, count, scratch);
    return {scratch, count * size};
  }
  if (stream) {
    stream->read(first, count, scratch);
    return {scratch, count * size};
  }
  return {view().data + first * size, count * size};
}

std::vector<LoadedOperand> load_operands(const std::vector<std::string>& operands, std::optional<DType> dtype,
                                         LoadMode mode) {
  return load_operands(std::vector<Operand>(operands.begin(), operands.end()), dtype, mode);
}

std::vector<LoadedOperand> load_operands(const std::vector<Operand>& operands, std::optional<DType> dtype,
                                         LoadMode mode) {
  std::vector<Pending> pending;
  pending.reserve(operands.size());
  int stdin_count = 0;
  for (const auto& operand : operands) {
    Pending p;
    if (const auto* b = std::get_if<BorrowedTensor>(&operand)) {
      p.kind = OperandKind::borrowed;
      p.borrowed = b;
      pending.push_back(std::move(p));
      continue;
    }
    const std::string& text = std::get<std::string>(operand);
    p.kind = classify_operand(text);
    p.text = text;
    if (p.kind == OperandKind::standard_input && ++stdin_count > 1)
      throw Error(Errc::usage, "standard input ('-') can be given as one operand only");
    pending.push_back(std::move(p));
  }

  // Pass 1: read files and parse JSON; the first dtype found anchors the others.
  std::optional<DType> anchor = dtype;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    with_operand_context(i, p, [&] {
      if (p.kind == OperandKind::scalar_literal) return;
      if (p.kind == OperandKind::borrowed) {
        if (!anchor) anchor = p.borrowed->dtype;
        return;
      }
      std::span<const std::byte> bytes;
      if (p.kind == OperandKind::array_literal) {
        bytes = std::as_bytes(std::span(p.text.data(), p.text.size()));
      } else {
        if (mode == LoadMode::streams) {
          std::vector<std::byte> consumed;
          p.stream = NpyStream::open(p.text, consumed);
          if (p.stream) {
            if (!anchor) anchor = p.stream->header().dtype;
            return;
          }
          // Not streamable: read it whole, starting with what a pipe already gave.
          if (p.text == "-") p.bytes = InputBytes::read_rest_of_stdin(std::move(consumed));
        }
        if (!p.bytes) {
          // .npy straight into its tensor; JSON as text, parsed below.
          InputContent in = read_input(p.text);
          if (in.format == TensorFormat::npy) {
            p.format = TensorFormat::npy;
            p.tensor = std::move(in.tensor);
            if (!anchor) anchor = p.tensor->dtype();
            return;
          }
          p.bytes = std::move(in.json);
        }
        bytes = p.bytes->bytes();
      }
      p.format = detect_format(bytes);
      if (p.kind != OperandKind::array_literal && p.format == TensorFormat::npy) {
        p.tensor = read_npy(bytes);
        p.bytes.reset();
      } else {
        const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
        p.document = JsonTensorDocument::parse(text);
        if (auto declared = p.document->declared_dtype()) {
          p.tensor = p.document->to_tensor(std::nullopt);
          p.document.reset();
        }
      }
      if (!anchor && p.tensor) anchor = p.tensor->dtype();
    });
  }

  // Pass 2: everything else takes the anchor dtype.
  std::vector<LoadedOperand> out;
  out.reserve(pending.size());
  for (std::size_t i = 0; i < pending.size(); ++i) {
    Pending& p = pending[i];
    LoadedOperand lo;
    lo.kind = p.kind;
    lo.format = p.format;
    lo.stream = std::move(p.stream);
    with_operand_context(i, p, [&] {
      if (lo.stream) return;
      if (p.kind == OperandKind::borrowed) {
        // No elements: nothing to read, and `data` may be null (which marks an operand no longer
        // borrowed): an empty tensor of its own.
        if (p.borrowed->shape.element_count() == 0) lo.tensor = Tensor(p.borrowed->dtype, p.borrowed->shape);
        else if (p.borrowed->read_in_place() || mode == LoadMode::borrowed_as_is) lo.borrowed = *p.borrowed;
        else lo.tensor = copy_to_c_order(*p.borrowed);
        return;
      }
      if (p.tensor) {
        lo.tensor = std::move(*p.tensor);
        return;
      }
      if (!anchor) throw OptionError(OptionKey::dtype, OptionRule::needed, {}, "operand", {}, Errc::invalid_input);
      if (p.document) {
        lo.tensor = p.document->to_tensor(anchor);
      } else {
        lo.tensor = Tensor(*anchor, Shape{});
        lo.tensor.set_bits_at(0, parse_scalar_literal(p.text, *anchor));
      }
    });
    out.push_back(std::move(lo));
  }
  return out;
}

}  // namespace dmlbits
