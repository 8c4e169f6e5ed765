// The CPU reference backend: plain scalar loops per (op, element width), written to be read.
// It is the executable specification of dmlbits' semantics; every faster kernel and shader is
// tested against it byte for byte.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "dmlbits/backend.hpp"

namespace dmlbits {

// The semantics, one element at a time. T is the unsigned integer of the element width: the
// operators act on raw bits, whatever the dtype.
template <class T>
constexpr T reference_binary(OpKind op, T a, T b, ShiftOverflow overflow) {
  static_assert(std::is_unsigned_v<T>);
  constexpr unsigned width = sizeof(T) * 8;
  switch (op) {
    case OpKind::bit_and: return static_cast<T>(a & b);
    case OpKind::bit_or: return static_cast<T>(a | b);
    case OpKind::bit_xor: return static_cast<T>(a ^ b);
    case OpKind::shl:
    case OpKind::shr: {
      // The count is B's whole value. Counts of `width` or more give 0 (NumPy, XLA, ONNX
      // opset 28) unless --shift-overflow wrap asks for count modulo width (HLSL's behaviour).
      std::uint64_t count = b;
      if (count >= width) {
        if (overflow == ShiftOverflow::zero) return 0;
        count %= width;
      }
      return op == OpKind::shl ? static_cast<T>(a << count) : static_cast<T>(a >> count);
    }
    default: return 0;  // not a binary op; validate() never lets this through
  }
}

template <class T>
constexpr T reference_not(T a) {
  return static_cast<T>(~a);
}

// Set bits of the element's encoding: two's complement for signed types (-1 as INT8 -> 8),
// the IEEE pattern for floats.
template <class T>
constexpr unsigned reference_popcount(T a) {
  return static_cast<unsigned>(std::popcount(a));
}

class CpuReferenceBackend final : public Backend {
 public:
  std::string_view name() const override { return "cpu-reference"; }
  std::string device_description() const override { return "CPU reference (scalar loops)"; }
  std::optional<std::string> unsupported_reason(const ValidatedOp&) const override { return std::nullopt; }
  void run(const ValidatedOp& op, const ExecuteBuffers& buffers) override;
};

}  // namespace dmlbits
