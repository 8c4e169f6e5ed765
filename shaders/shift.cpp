// shl, shr: logical shifts of A by B's whole element value.
//
// Counts >= the element width give 0 (ShiftOverflow::zero), wrap modulo the width
// (ShiftOverflow::wrap), or follow DirectML's measured rule (ShiftOverflow::directml; ops.cpp
// states it): up to 32 bits, the zero-extended element shifted as a 32-bit lane by count & 31,
// which is what D3D's ishl/ushr do; 64 bits, by count_lo if it is < 32, else by 32 + (count_lo
// & 31). vkd3d does not reduce shift counts modulo 32, so no shift here ever receives a count
// >= 32: counts are masked, and 64-bit shifts are built from 32-bit ones.
#include "dmlbits/error.hpp"
#include "kernel_writer.hpp"

namespace dmlbits::gpu::shader {
namespace {

class Shift final : public Family {
 public:
  explicit Shift(const KernelKey& key) : left_(key.op == OpKind::shl), bits_(key.in_bits), mode_(key.shift_overflow) {}

  unsigned inputs() const override { return 2; }

  void element(ProgramBuilder& b, const Value& a, const Value& count, const Value& out) const override {
    if (bits_ == 64) {
      element64(b, a, count, out);
    } else {
      element32(b, a.lo, count.lo, out.lo);
    }
  }

 private:
  // Elements of up to 32 bits, zero-extended in a and count. A left shift may carry bits past a
  // narrow element's width; packing the element with bfi drops them.
  // In directml mode the lane is shifted by count & 31 whatever the width: bits shifted past a
  // narrow element's width are dropped as above, so counts from the width to 31 give 0.
  void element32(ProgramBuilder& b, Reg a, Reg count, Reg out) const {
    const Reg amount = b.scalar();
    // zero, wrap: count mod width, the count itself when < width; directml: count mod 32.
    b.and_(amount, count, imm(mode_ == ShiftOverflow::directml ? 31 : bits_ - 1));
    if (left_) {
      b.ishl(out, a, amount);
    } else {
      b.ushr(out, a, amount);
    }
    if (mode_ == ShiftOverflow::zero) {
      const Reg over = b.scalar();
      b.uge(over, count, imm(bits_));
      b.movc(out, over, imm(0), out);
    }
  }

  // 64-bit: with s = amount mod 32 and big = amount >= 32,
  //   shl: hi' = big ? lo << s : (hi << s) | (lo >> (32 - s)),  lo' = big ? 0 : lo << s
  //   shr: lo' = big ? hi >> s : (lo >> s) | (hi << (32 - s)),  hi' = big ? 0 : hi >> s
  // where x >> (32 - s) is computed as (x >> 1) >> (31 - s): 0 for s = 0, no count reaches 32.
  // zero and wrap: amount = count mod 64. directml: s = count_lo & 31 and big = count_lo >= 32,
  // a shift by 32 + s for every count_lo of 32 and more.
  void element64(ProgramBuilder& b, const Value& a, const Value& count, const Value& out) const {
    const Reg amount = b.scalar();
    const Reg s = b.scalar();
    const Reg inverse = b.scalar();
    const Reg carry = b.scalar();
    const Reg near = b.scalar();
    const Reg far = b.scalar();
    if (mode_ == ShiftOverflow::directml) {
      b.and_(s, count.lo, imm(31));
      b.xor_(inverse, s, imm(31));          // 31 - s
      b.and_(amount, count.lo, imm(~31u));  // nonzero: big
    } else {
      b.and_(amount, count.lo, imm(63));  // count mod 64: the high word is a multiple of 2^32
      b.and_(s, amount, imm(31));
      b.xor_(inverse, s, imm(31));  // 31 - s
      b.and_(amount, amount, imm(32));
    }
    if (left_) {
      b.ushr(carry, a.lo, imm(1));
      b.ushr(carry, carry, inverse);
      b.ishl(near, a.lo, s);  // lo << s
      b.ishl(far, a.hi, s);
      b.or_(far, far, carry);  // (hi << s) | carry
      b.movc(out.hi, amount, near, far);
      b.movc(out.lo, amount, imm(0), near);
    } else {
      b.ishl(carry, a.hi, imm(1));
      b.ishl(carry, carry, inverse);
      b.ushr(near, a.hi, s);  // hi >> s
      b.ushr(far, a.lo, s);
      b.or_(far, far, carry);  // (lo >> s) | carry
      b.movc(out.lo, amount, near, far);
      b.movc(out.hi, amount, imm(0), near);
    }
    if (mode_ == ShiftOverflow::zero) {
      // count >= 64 exactly when its high word or bits 6..31 of its low word are set.
      const Reg over = b.scalar();
      b.and_(over, count.lo, imm(~63u));
      b.or_(over, over, count.hi);
      b.movc(out.lo, over, imm(0), out.lo);
      b.movc(out.hi, over, imm(0), out.hi);
    }
  }

  bool left_;
  unsigned bits_;
  ShiftOverflow mode_;
};

}  // namespace

dxbc::Program shift_kernel(const KernelKey& key) { return write_kernel(key, Shift(key)); }

std::unique_ptr<Family> shift_family(const KernelKey& key) { return std::make_unique<Shift>(key); }

}  // namespace dmlbits::gpu::shader
