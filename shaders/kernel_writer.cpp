// The shared kernel skeleton. In HLSL terms every kernel is:
//
//   [numthreads(256, 1, 1)] void main(uint3 id : SV_DispatchThreadID) {
//     for (uint unit = id.x; unit < units(count); unit += threads) {  // grid-stride loop
//       uint first = unit * per_unit, remaining = count - first;
//       if (packed)                                     // 16 bytes of output from whole input
//         out = combine(load words of A [, B]) & tail_mask(remaining);  // words (Load4)
//       else                                            // strided: one element at a time
//         for (k = 0; k < per_unit; ++k) if (k < remaining) out.element[k] = f(A[elem(first + k)], ...);
//       u0.Store4(unit * 16, out);                      // strided: Store (Store2 for 64-bit)
//     }
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
using dxbc::input;
using dxbc::OperandType;
using dxbc::RawBuffer;
using dxbc::srv;
using dxbc::uav;

Src constant(unsigned word) { return dxbc::cb(0, word / 4, word % 4); }

namespace {

unsigned log2u(unsigned v) { return static_cast<unsigned>(std::countr_zero(v)); }

// How output units, elements and words relate for one key (gpu_kernel.hpp).
struct Layout {
  unsigned in_bits, out_bits;
  unsigned unit_words;  // output words per unit: 4 packed; 1 strided, 2 for 64-bit outputs
  unsigned per_unit;    // output elements per unit
  unsigned per_word;    // output elements per output word (1 for 64-bit outputs)
  unsigned in_words;    // words of each input covering one whole unit (packed kernels)
  unsigned inputs;
  bool strided;
};

Layout layout_of(const KernelKey& key, const Family& f) {
  Layout l{};
  l.in_bits = key.in_bits;
  l.out_bits = key.out_bits;
  l.unit_words = unit_bytes(key) / 4;
  l.per_unit = l.unit_words * 32 / key.out_bits;
  l.per_word = std::max(1u, 32 / key.out_bits);
  l.in_words = l.per_unit * key.in_bits / 32;  // 0 when one element is a fraction of a word (strided only)
  l.inputs = f.inputs();
  l.strided = key.strided;
  return l;
}

}  // namespace

void grid_stride_loop(ProgramBuilder& b, Reg unit, Reg units, const std::function<void()>& body) {
  b.mov(unit, input(OperandType::thread_id, 0));
  b.loop();
  {
    ProgramBuilder::Scope s(b);
    const Reg stop = b.scalar();
    b.uge(stop, unit, units);
    b.breakc_nz(stop);
  }
  body();
  b.iadd(unit, unit, constant(kThreadsWord));
  b.endloop();
}

namespace {

class KernelWriter {
 public:
  KernelWriter(const Layout& l, const Family& f) : l_(l), f_(f) {}

  dxbc::Program write() {
    declare();
    units_ = b_.scalar();
    unit_units();
    unit_ = b_.scalar();
    grid_stride_loop(b_, unit_, units_, [this] { unit_body(); });
    b_.ret();
    return b_.finish();
  }

 private:
  void unit_body() {
    ProgramBuilder::Scope s(b_);
    remaining_ = b_.scalar();
    if (l_.strided) {
      first_ = b_.scalar();
      shift_left(first_, unit_, log2u(l_.per_unit));
    }
    b_.imul(remaining_, unit_, imm(0u - l_.per_unit));  // -first, without a negate modifier
    b_.iadd(remaining_, remaining_, constant(kCountWord));

    out_ = l_.unit_words == 1 ? b_.scalar() : b_.vector(l_.unit_words);
    // Packed kernels have no branch: lavapipe runs both sides of one under a mask.
    if (!l_.strided) {
      words_path();
      tail_mask();
    } else {
      elements_path();
    }

    const Reg address = b_.scalar();
    b_.ishl(address, unit_, imm(log2u(4 * l_.unit_words)));
    b_.store_raw(uav(0), address, out_);
  }

  void declare() {
    b_.dcl_global_flags(dxbc::kRefactoringAllowed);
    b_.dcl_constant_buffer(0, kConstantWords / 4);
    for (unsigned t = 0; t < l_.inputs; ++t) b_.dcl_resource_raw(t);
    b_.dcl_uav_raw(0);
    b_.dcl_input(OperandType::thread_id, dxbc::kMaskX);
    b_.dcl_thread_group(kThreadGroupSize, 1, 1);
  }

  // units = ceil(count / per_unit), computed without count + per_unit - 1 overflowing.
  void unit_units() {
    if (l_.per_unit == 1) {
      b_.mov(units_, constant(kCountWord));
      return;
    }
    ProgramBuilder::Scope s(b_);
    const Reg partial = b_.scalar();
    b_.ushr(units_, constant(kCountWord), imm(log2u(l_.per_unit)));
    b_.and_(partial, constant(kCountWord), imm(l_.per_unit - 1));
    b_.movc(partial, partial, imm(1), imm(0));
    b_.iadd(units_, units_, partial);
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

  // Elements past `count` in the unit are 0: word w keeps its elements below `remaining`,
  // all four words at once (vector immediates, `remaining` replicated).
  void tail_mask() {
    ProgramBuilder::Scope s(b_);
    const Reg keep = b_.vector(4);
    if (l_.out_bits >= 32) {
      // One element per word (32-bit) or per word pair (64-bit): keep it if its index < remaining.
      const unsigned pair = l_.out_bits == 64 ? 1 : 0;
      b_.ult(keep, dxbc::imm4(0u >> pair, 1u >> pair, 2u >> pair, 3u >> pair), remaining_);
    } else {
      const unsigned w = l_.per_word;
      const Reg some = b_.vector(4);
      // Partial word: the low (remaining - first element of the word) * out_bits bits, a count
      // below 32 there (masked to stay below 32 everywhere).
      b_.iadd(keep, remaining_, dxbc::imm4(0u, 0u - w, 0u - 2 * w, 0u - 3 * w));
      b_.ishl(keep, keep, imm(log2u(l_.out_bits)));
      b_.and_(keep, keep, imm(31));
      b_.ishl(keep, imm(1), keep);
      b_.iadd(keep, keep, imm(0xffffffffu));
      b_.uge(some, remaining_, dxbc::imm4(w, 2 * w, 3 * w, 4 * w));  // the whole word
      b_.movc(keep, some, imm(0xffffffffu), keep);
      b_.ult(some, dxbc::imm4(0u, w, 2 * w, 3 * w), remaining_);  // any element of the word
      b_.and_(keep, keep, some);
    }
    b_.and_(out_, out_, keep);
  }

  // Input t's words for this unit: in_words consecutive words from base*bytes + unit*in_words*4,
  // as registers of up to four words (one ld_raw each).
  std::vector<Reg> load_words(unsigned t) {
    const Reg address = b_.scalar();
    const Reg offset = b_.scalar();
    base_bytes(address, t);
    b_.ishl(offset, unit_, imm(log2u(4 * l_.in_words)));
    b_.iadd(address, address, offset);
    std::vector<Reg> vectors;
    for (unsigned w = 0; w < l_.in_words; w += 4) {
      const Reg v = b_.vector(std::min(4u, l_.in_words - w));
      if (w == 0) {
        b_.ld_raw(v, address, srv(t));
      } else {
        b_.iadd(offset, address, imm(4 * w));
        b_.ld_raw(v, offset, srv(t));
      }
      vectors.push_back(v);
    }
    return vectors;
  }

  static std::vector<Reg> components(const std::vector<Reg>& vectors) {
    std::vector<Reg> words;
    for (const Reg& v : vectors)
      for (unsigned i = 0; i < v.mask.count(); ++i) words.push_back(v.component(i));
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

  // Word i of the unit being computed.
  Reg out_word(unsigned i) const { return l_.unit_words == 1 ? out_ : out_.component(i); }

  // Element k of the unit computed by the family from a (and bv), placed in out_: a whole
  // component for 32- and 64-bit outputs, a bit field (bfi) of one for narrower ones.
  void put_element(unsigned k, const Value& a, const Value& bv) {
    if (l_.out_bits == 64) {
      f_.element(b_, a, bv, {out_word(2 * k), out_word(2 * k + 1)});
    } else if (l_.out_bits == 32) {
      const Reg word = out_word(k);
      f_.element(b_, a, bv, {word, word});
    } else {
      const Reg r = b_.scalar();
      const Reg word = out_word(k / l_.per_word);
      f_.element(b_, a, bv, {r, r});
      b_.bfi(word, imm(l_.out_bits), imm(k % l_.per_word * l_.out_bits), r, word);
    }
  }

  void words_path() {
    ProgramBuilder::Scope s(b_);
    const std::vector<Reg> a = load_words(0);
    const std::vector<Reg> bw = l_.inputs == 2 ? load_words(1) : a;
    // The logic ops combine whole words, four at a time (one instruction per vector).
    if (l_.in_words == l_.unit_words && f_.word(b_, a[0], bw[0], out_)) return;
    const std::vector<Reg> aw = components(a), bws = components(bw);
    for (unsigned k = 0; k < l_.per_unit; ++k) {
      ProgramBuilder::Scope ks(b_);
      const Value av = extract(aw, k);
      put_element(k, av, l_.inputs == 2 ? extract(bws, k) : av);
    }
  }

  // Strided kernels: one element at a time. The coordinates of the unit's first element come
  // from divisions; the next elements of the unit follow it in the output, so their coordinates
  // are counted on.
  void elements_path() {
    // Elements past `count` are 0: every word starts at 0 unless one element fills it.
    if (l_.per_unit > 1) b_.mov(out_, imm(0));
    std::array<Reg, kMaxRank> coords{};
    for (auto& c : coords) c = b_.scalar();
    for (unsigned k = 0; k < l_.per_unit; ++k) {
      ProgramBuilder::Scope ks(b_);
      if (k > 0) {
        const Reg valid = b_.scalar();
        b_.ult(valid, imm(k), remaining_);
        b_.if_nz(valid);
      }
      std::array<Reg, 2> index{};
      if (k == 0) {
        first_coordinates(coords);
      } else {
        next_coordinates(coords);
      }
      strided_indices(coords, index);
      const Value a = fetch(0, index[0]);
      put_element(k, a, l_.inputs == 2 ? fetch(1, index[1]) : a);
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
      default:
        throw Error(Errc::internal, "kernel for " + std::to_string(l_.in_bits) + "-bit elements");
    }
  }

  Layout l_;
  const Family& f_;
  ProgramBuilder b_;
  Reg units_, unit_, first_, remaining_, out_;
};

}  // namespace

dxbc::Program write_kernel(const KernelKey& key, const Family& family) {
  return KernelWriter(layout_of(key, family), family).write();
}

}  // namespace dmlbits::gpu::shader
