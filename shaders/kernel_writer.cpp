// The shared kernel skeleton. In HLSL terms every kernel is:
//
//   [numthreads(64, 1, 1)] void main(uint3 id : SV_DispatchThreadID) {
//     uint unit = id.y * threads_x + id.x;          // one output word (or 64-bit element)
//     if (unit >= units(count)) return;
//     uint first = unit * per_unit, remaining = count - first;
//     if (packed && inputs aligned [&& whole unit])  // fast path: whole input words
//       out = combine(load words of A [, B]) & tail_mask(remaining);
//     else                                            // one element at a time
//       for (k = 0; k < per_unit; ++k) if (k < remaining) out.element[k] = f(A[elem(first + k)], ...);
//     u0.Store(unit * unit_bytes, out);
//   }
//
// vkd3d 1.2 traps shape the code: no shift count is ever >= 32 (every count is masked or a
// constant below 32), imul writes only its low half (null high destination), udiv never writes
// a register it reads, no umul/umad/uaddc/usubb.
#include <algorithm>
#include <bit>
#include <vector>

#include "dmlbits/error.hpp"
#include "kernel_writer.hpp"

namespace dmlbits::gpu::shader {

using dxbc::Dst;
using dxbc::OperandType;
using dxbc::RawBuffer;
using dxbc::input;
using dxbc::srv;
using dxbc::uav;

Src constant(unsigned word) { return dxbc::cb(0, word / 4, word % 4); }

namespace {

unsigned log2u(unsigned v) { return static_cast<unsigned>(std::countr_zero(v)); }

// How output units, elements and words relate for one key.
struct Layout {
  unsigned in_bits, out_bits;
  unsigned per_unit;    // output elements per unit: 32 / out_bits, or 1 for 64-bit outputs
  unsigned unit_words;  // output words per unit: 1, or 2 for 64-bit outputs
  unsigned in_words;    // words of each input covering one whole unit (packed layout)
  unsigned inputs;
  bool strided;
};

Layout layout_of(const KernelKey& key, const Family& f) {
  Layout l{};
  l.in_bits = key.in_bits;
  l.out_bits = key.out_bits;
  l.per_unit = key.out_bits >= 32 ? 1 : 32 / key.out_bits;
  l.unit_words = key.out_bits == 64 ? 2 : 1;
  l.in_words = l.per_unit * key.in_bits / 32;  // 0 when one element is a fraction of a word
  l.inputs = f.inputs();
  l.strided = key.strided;
  return l;
}

class KernelWriter {
 public:
  KernelWriter(const Layout& l, const Family& f) : l_(l), f_(f) {}

  dxbc::Program write() {
    declare();
    unit_ = b_.scalar();
    b_.imul(unit_, input(OperandType::thread_id, 1), constant(kThreadsXWord));
    b_.iadd(unit_, unit_, input(OperandType::thread_id, 0));
    return_past_last_unit();

    first_ = b_.scalar();
    remaining_ = b_.scalar();
    shift_left(first_, unit_, log2u(l_.per_unit));
    b_.imul(remaining_, unit_, imm(0u - l_.per_unit));  // -first, without a negate modifier
    b_.iadd(remaining_, remaining_, constant(kCountWord));

    out_ = l_.unit_words == 2 ? b_.vector(2) : b_.scalar();
    if (!l_.strided && l_.per_unit > 1) {
      // Packed words are read whole when every input's first element starts a word (and, when
      // a unit spans several input words, the unit is complete: words past the data may lie
      // past the end of the buffer).
      const Reg fast = b_.scalar();
      fast_path_condition(fast);
      b_.if_nz(fast);
      words_path();
      b_.else_();
      elements_path();
      b_.endif();
    } else {
      elements_path();
    }

    ProgramBuilder::Scope s(b_);
    const Reg address = b_.scalar();
    b_.ishl(address, unit_, imm(log2u(4 * l_.unit_words)));
    b_.store_raw(uav(0), address, out_);
    b_.ret();
    return b_.finish();
  }

 private:
  void declare() {
    b_.dcl_global_flags(dxbc::kRefactoringAllowed);
    b_.dcl_constant_buffer(0, kConstantWords / 4);
    for (unsigned t = 0; t < l_.inputs; ++t) b_.dcl_resource_raw(t);
    b_.dcl_uav_raw(0);
    b_.dcl_input(OperandType::thread_id, dxbc::kMaskXY);
    b_.dcl_thread_group(kThreadGroupSize, 1, 1);
  }

  // units = ceil(count / per_unit), computed without count + per_unit - 1 overflowing.
  void return_past_last_unit() {
    ProgramBuilder::Scope s(b_);
    const Reg stop = b_.scalar();
    if (l_.per_unit == 1) {
      b_.uge(stop, unit_, constant(kCountWord));
    } else {
      const Reg units = b_.scalar();
      b_.ushr(units, constant(kCountWord), imm(log2u(l_.per_unit)));
      b_.and_(stop, constant(kCountWord), imm(l_.per_unit - 1));
      b_.movc(stop, stop, imm(1), imm(0));
      b_.iadd(units, units, stop);
      b_.uge(stop, unit_, units);
    }
    b_.if_nz(stop);
    b_.ret();
    b_.endif();
  }

  // d = a << n for a constant n < 32 (a mov when n is 0).
  void shift_left(Reg d, Src a, unsigned n) {
    if (n == 0) {
      b_.mov(d, a);
    } else {
      b_.ishl(d, a, imm(n));
    }
  }

  // Byte offset of input t's first element: base[t] * element bytes.
  void base_bytes(Reg d, unsigned t) { shift_left(d, constant(kBaseWord + t), log2u(l_.in_bits / 8)); }

  void fast_path_condition(Reg fast) {
    ProgramBuilder::Scope s(b_);
    const bool whole_unit_needed = l_.in_words > 1;
    if (l_.in_bits < 32) {
      base_bytes(fast, 0);
      if (l_.inputs == 2) {
        const Reg other = b_.scalar();
        base_bytes(other, 1);
        b_.or_(fast, fast, other);
      }
      b_.and_(fast, fast, imm(3));
      b_.ieq(fast, fast, imm(0));
      if (whole_unit_needed) {
        const Reg whole = b_.scalar();
        b_.uge(whole, remaining_, imm(l_.per_unit));
        b_.and_(fast, fast, whole);
      }
    } else {
      // 32- and 64-bit elements are always word aligned.
      b_.uge(fast, remaining_, imm(l_.per_unit));
    }
  }

  // Input t's words for this unit: in_words consecutive words from base*bytes + unit*in_words*4.
  std::vector<Reg> load_words(unsigned t) {
    const Reg address = b_.scalar();
    const Reg offset = b_.scalar();
    base_bytes(address, t);
    b_.ishl(offset, unit_, imm(log2u(4 * l_.in_words)));
    b_.iadd(address, address, offset);
    std::vector<Reg> words;
    for (unsigned w = 0; w < l_.in_words; w += 4) {
      const unsigned n = std::min(4u, l_.in_words - w);
      const Reg v = b_.vector(n);
      if (w == 0) {
        b_.ld_raw(v, address, srv(t));
      } else {
        b_.iadd(offset, address, imm(4 * w));
        b_.ld_raw(v, offset, srv(t));
      }
      for (unsigned i = 0; i < n; ++i) words.push_back(v.component(i));
    }
    return words;
  }

  // Element k of a run of packed words.
  Value extract(const std::vector<Reg>& words, unsigned k) {
    if (l_.in_bits == 64) return {words[2 * k], words[2 * k + 1]};
    const Reg word = words[k * l_.in_bits / 32];
    if (l_.in_bits == 32) return {word, word};
    const Reg v = b_.scalar();
    b_.ubfe(v, imm(l_.in_bits), imm(k * l_.in_bits % 32), word);
    return {v, v};
  }

  void words_path() {
    ProgramBuilder::Scope s(b_);
    std::vector<Reg> a = load_words(0);
    std::vector<Reg> bw = l_.inputs == 2 ? load_words(1) : a;
    if (!(l_.in_words == 1 && f_.word(b_, a[0], bw[0], out_))) {
      b_.mov(out_, imm(0));
      for (unsigned k = 0; k < l_.per_unit; ++k) {
        ProgramBuilder::Scope ks(b_);
        const Value av = extract(a, k);
        const Value bv = l_.inputs == 2 ? extract(bw, k) : av;
        const Reg r = b_.scalar();
        f_.element(b_, av, bv, {r, r});
        b_.bfi(out_, imm(l_.out_bits), imm(k * l_.out_bits), r, out_);
      }
    }
    // Elements past `count` in the last word are 0: keep the low remaining*out_bits bits.
    const Reg mask = b_.scalar();
    const Reg whole = b_.scalar();
    b_.ishl(mask, remaining_, imm(log2u(l_.out_bits)));
    b_.and_(mask, mask, imm(31));  // only used when remaining < per_unit, where it is < 32
    b_.ishl(mask, imm(1), mask);
    b_.iadd(mask, mask, imm(0xffffffffu));
    b_.uge(whole, remaining_, imm(l_.per_unit));
    b_.movc(mask, whole, imm(0xffffffffu), mask);
    b_.and_(out_, out_, mask);
  }

  void elements_path() {
    if (l_.per_unit > 1) b_.mov(out_, imm(0));
    // Strided: the coordinates of the unit's first element come from divisions; the next
    // elements of the unit follow it in the output, so their coordinates are counted on.
    std::array<Reg, kMaxRank> coords{};
    if (l_.strided)
      for (auto& c : coords) c = b_.scalar();
    for (unsigned k = 0; k < l_.per_unit; ++k) {
      ProgramBuilder::Scope ks(b_);
      if (k > 0) {
        const Reg valid = b_.scalar();
        b_.ult(valid, imm(k), remaining_);
        b_.if_nz(valid);
      }
      std::array<Reg, 2> index{};
      if (l_.strided) {
        if (k == 0) {
          first_coordinates(coords);
        } else {
          next_coordinates(coords);
        }
        strided_indices(coords, index);
      } else {
        Reg flat = first_;
        if (k > 0) {
          flat = b_.scalar();
          b_.iadd(flat, first_, imm(k));
        }
        for (unsigned t = 0; t < l_.inputs; ++t) {
          index[t] = b_.scalar();
          b_.iadd(index[t], constant(kBaseWord + t), flat);
        }
      }
      const Value a = fetch(0, index[0]);
      const Value bv = l_.inputs == 2 ? fetch(1, index[1]) : a;
      if (l_.per_unit == 1) {
        f_.element(b_, a, bv, l_.unit_words == 2 ? Value{out_.x(), out_.y()} : Value{out_, out_});
      } else {
        const Reg r = b_.scalar();
        f_.element(b_, a, bv, {r, r});
        b_.bfi(out_, imm(l_.out_bits), imm(k * l_.out_bits), r, out_);
      }
      if (k > 0) b_.endif();
    }
  }

  // The coordinates of output element `first`: peeled off innermost first by udiv (quotient
  // and remainder) over sizes[7..1]; what is left is dimension 0's coordinate. The quotients
  // alternate between two registers, so udiv never writes a register it reads.
  void first_coordinates(const std::array<Reg, kMaxRank>& coords) {
    ProgramBuilder::Scope s(b_);
    const Reg quotients[2] = {b_.scalar(), b_.scalar()};
    Reg rest = first_;
    for (unsigned d = kMaxRank - 1; d > 0; --d) {
      const Reg q = quotients[d % 2];
      b_.udiv(q, coords[d], rest, constant(kSizesWord + d));
      rest = q;
    }
    b_.mov(coords[0], rest);
  }

  // The next element's coordinates: the innermost one plus 1, carrying outwards (branch-free:
  // the carry is 0 or 1). The element exists, so dimension 0 never overflows.
  void next_coordinates(const std::array<Reg, kMaxRank>& coords) {
    ProgramBuilder::Scope s(b_);
    const Reg wrapped = b_.scalar();
    b_.iadd(coords[kMaxRank - 1], coords[kMaxRank - 1], imm(1));
    for (unsigned d = kMaxRank - 1; d > 0; --d) {
      b_.ieq(wrapped, coords[d], constant(kSizesWord + d));
      b_.movc(coords[d], wrapped, imm(0), coords[d]);
      b_.and_(wrapped, wrapped, imm(1));
      b_.iadd(coords[d - 1], coords[d - 1], wrapped);
    }
  }

  // Element indices in each input: base[t] + sum over dimensions of coords[d] * strides[t][d].
  // Products and sums are taken mod 2^32 (imul's low half), which is exact because the true
  // offset fits. A stride of 0 broadcasts.
  void strided_indices(const std::array<Reg, kMaxRank>& coords, std::array<Reg, 2>& index) {
    for (unsigned t = 0; t < l_.inputs; ++t) {
      index[t] = b_.scalar();
      b_.mov(index[t], constant(kBaseWord + t));
    }
    ProgramBuilder::Scope s(b_);
    const Reg term = b_.scalar();
    for (unsigned d = 0; d < kMaxRank; ++d)
      for (unsigned t = 0; t < l_.inputs; ++t) {
        b_.imul(term, coords[d], constant(kStridesWord + kMaxRank * t + d));
        b_.iadd(index[t], index[t], term);
      }
  }

  // Input t's element at element index `index`.
  Value fetch(unsigned t, Reg index) {
    const Reg address = b_.scalar();
    switch (l_.in_bits) {
      case 8:
      case 16: {
        // The aligned word holding the element, then the element's bits.
        const unsigned bits = l_.in_bits;
        const Reg word = b_.scalar();
        const Reg offset = b_.scalar();
        if (bits == 8) {
          b_.and_(address, index, imm(~3u));
        } else {
          b_.ishl(address, index, imm(1));
          b_.and_(address, address, imm(~3u));
        }
        b_.ld_raw(word, address, srv(t));
        b_.ishl(offset, index, imm(log2u(bits)));
        b_.and_(offset, offset, imm(32 - bits));
        const Reg v = b_.scalar();
        b_.ubfe(v, imm(bits), offset, word);
        return {v, v};
      }
      case 32: {
        b_.ishl(address, index, imm(2));
        const Reg v = b_.scalar();
        b_.ld_raw(v, address, srv(t));
        return {v, v};
      }
      case 64: {
        b_.ishl(address, index, imm(3));
        const Reg v = b_.vector(2);
        b_.ld_raw(v, address, srv(t));
        return {v.x(), v.y()};
      }
      default: throw Error(Errc::internal, "kernel for " + std::to_string(l_.in_bits) + "-bit elements");
    }
  }

  Layout l_;
  const Family& f_;
  ProgramBuilder b_;
  Reg unit_, first_, remaining_, out_;
};

}  // namespace

dxbc::Program write_kernel(const KernelKey& key, const Family& family) {
  return KernelWriter(layout_of(key, family), family).write();
}

}  // namespace dmlbits::gpu::shader
