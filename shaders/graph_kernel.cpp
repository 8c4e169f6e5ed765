// Graph kernels (graph_kernel.hpp). In HLSL terms:
//
//   [numthreads(256, 1, 1)] void main(uint3 id : SV_DispatchThreadID) {
//     scalar leaves = root constants;                                  // read once per thread
//     for (uint unit = id.x; unit < units(count); unit += threads) {  // grid-stride loop
//       load the unit's whole words of every buffer leaf (Load4, as the packed kernels do);
//       for (k = 0; k < per_unit; ++k) {                               // unrolled
//         v[node] = op(v[arg0], v[arg1]) for every node, in registers;  // families' element()
//         out.element[k] = v[last];
//       }
//       u0.Store4(unit * 16, out);
//     }
//   }
//
// Values are zero-extended elements as the families take them (64-bit ones as word pairs); a
// narrow node's result may carry bits past its width (a left shift, not), which bfi drops when
// the output is packed but a further node would see, so a narrow node that feeds another is
// masked to its width (popcount's counts fit). Output units are 16 bytes of the output's elements, so every leaf's
// elements for a unit are whole words: the output is 8 bits (then leaves are 8 to 64), 16 or
// 64 (then every value has the output's width: no operator widens, popcount's counts are 8 or
// 32 bits), or 32 (leaves of 8 bits and more, one word and more per four elements).
#include "graph_kernel.hpp"

#include <algorithm>
#include <bit>
#include <memory>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "kernel_writer.hpp"

namespace dmlbits::gpu {
namespace {

using dxbc::imm;
using dxbc::input;
using dxbc::OperandType;
using dxbc::ProgramBuilder;
using dxbc::Reg;
using dxbc::srv;
using dxbc::uav;
using shader::constant;
using shader::Value;

unsigned log2u(unsigned v) { return static_cast<unsigned>(std::countr_zero(v)); }

bool valid_width(unsigned bits) { return bits == 8 || bits == 16 || bits == 32 || bits == 64; }

unsigned scalar_words(const GraphKernelKey& key) {
  unsigned words = 0;
  for (const GraphLeafKey& l : key.leaves)
    if (l.scalar) words += l.bits == 64 ? 2 : 1;
  return words;
}

// The width of a node's operand.
unsigned arg_bits(const GraphKernelKey& key, const GraphArgKey& a) {
  return a.node ? key.nodes[a.index].out_bits : key.leaves[a.index].bits;
}

KernelKey node_kernel_key(const GraphNodeKey& n) {
  KernelKey k;
  k.op = n.op;
  k.in_bits = n.in_bits;
  k.out_bits = n.out_bits;
  k.shift_overflow = n.shift_overflow;
  return k;
}

// The packed single-operator key whose units a graph kernel's output shares.
KernelKey unit_key(const GraphKernelKey& key) {
  const unsigned out = graph_out_bits(key);
  return {OpKind::bit_and, out, out, ShiftOverflow::zero, false};
}

class GraphWriter {
 public:
  explicit GraphWriter(const GraphKernelKey& key) : k_(key), out_bits_(graph_out_bits(key)) {
    per_unit_ = 128 / out_bits_;
    per_word_ = std::max(1u, 32 / out_bits_);
    for (const GraphNodeKey& n : key.nodes) families_.push_back(shader::make_family(node_kernel_key(n)));
  }

  dxbc::Program write() {
    b_.dcl_global_flags(dxbc::kRefactoringAllowed);
    b_.dcl_constant_buffer(0, kConstantWords / 4);
    const unsigned buffers = graph_buffer_count(k_);
    for (unsigned t = 0; t < buffers; ++t) b_.dcl_resource_raw(t);
    b_.dcl_uav_raw(0);
    b_.dcl_input(OperandType::thread_id, dxbc::kMaskX);
    b_.dcl_thread_group(kThreadGroupSize, 1, 1);

    // Scalar leaves live in registers for the whole thread; buffer leaves get their slots.
    leaf_values_.resize(k_.leaves.size());
    slots_.resize(k_.leaves.size());
    unsigned word = 2, slot = 0;  // scalars follow count and threads
    for (std::size_t i = 0; i < k_.leaves.size(); ++i) {
      const GraphLeafKey& l = k_.leaves[i];
      if (!l.scalar) {
        slots_[i] = slot++;
        continue;
      }
      const Reg lo = b_.scalar();
      b_.mov(lo, constant(word++));
      Reg hi = lo;
      if (l.bits == 64) {
        hi = b_.scalar();
        b_.mov(hi, constant(word++));
      }
      leaf_values_[i] = {lo, hi};
    }

    units_ = b_.scalar();
    unit_units();
    unit_ = b_.scalar();
    shader::grid_stride_loop(b_, unit_, units_, [this] { unit_body(); });
    b_.ret();
    return b_.finish();
  }

 private:
  // units = ceil(count / per_unit), computed without count + per_unit - 1 overflowing.
  void unit_units() {
    ProgramBuilder::Scope s(b_);
    const Reg partial = b_.scalar();
    b_.ushr(units_, constant(shader::kCountWord), imm(log2u(per_unit_)));
    b_.and_(partial, constant(shader::kCountWord), imm(per_unit_ - 1));
    b_.movc(partial, partial, imm(1), imm(0));
    b_.iadd(units_, units_, partial);
  }

  // The unit's words of the buffer leaf in `slot` (`bits` per element): per_unit * bits / 32
  // consecutive words from unit * that * 4, one ld_raw per four.
  std::vector<Reg> load_words(unsigned slot, unsigned bits) {
    const unsigned in_words = per_unit_ * bits / 32;
    const Reg address = b_.scalar();
    b_.ishl(address, unit_, imm(log2u(4 * in_words)));
    std::vector<Reg> words;
    Reg offset{};
    if (in_words > 4) offset = b_.scalar();
    for (unsigned w = 0; w < in_words; w += 4) {
      const Reg v = b_.vector(std::min(4u, in_words - w));
      if (w == 0) {
        b_.ld_raw(v, address, srv(slot));
      } else {
        b_.iadd(offset, address, imm(4 * w));
        b_.ld_raw(v, offset, srv(slot));
      }
      for (unsigned i = 0; i < v.mask.count(); ++i) words.push_back(v.component(i));
    }
    return words;
  }

  // Element k of a run of packed words of `bits`-bit elements.
  Value extract(const std::vector<Reg>& words, unsigned bits, unsigned k) {
    if (bits == 64) return {words[2 * k], words[2 * k + 1]};
    const Reg word = words[k * bits / 32];
    if (bits == 32) return {word, word};
    const Reg v = b_.scalar();
    b_.ubfe(v, imm(bits), imm(k * bits % 32), word);
    return {v, v};
  }

  Reg out_word(unsigned i) const { return out_.component(i); }

  void unit_body() {
    ProgramBuilder::Scope s(b_);
    out_ = b_.vector(4);
    std::vector<std::vector<Reg>> words(k_.leaves.size());
    for (std::size_t i = 0; i < k_.leaves.size(); ++i)
      if (!k_.leaves[i].scalar) words[i] = load_words(slots_[i], k_.leaves[i].bits);
    for (unsigned k = 0; k < per_unit_; ++k) {
      ProgramBuilder::Scope ks(b_);
      std::vector<Value> leaves = leaf_values_;
      for (std::size_t i = 0; i < k_.leaves.size(); ++i)
        if (!k_.leaves[i].scalar) leaves[i] = extract(words[i], k_.leaves[i].bits, k);
      std::vector<Value> nodes(k_.nodes.size());
      const auto value = [&](const GraphArgKey& a) { return a.node ? nodes[a.index] : leaves[a.index]; };
      for (std::size_t j = 0; j < k_.nodes.size(); ++j) {
        const GraphNodeKey& n = k_.nodes[j];
        const Value a = value(n.args[0]);
        const Value bv = op_info(n.op).arity == 2 ? value(n.args[1]) : a;
        const bool last = j + 1 == k_.nodes.size();
        if (last) {
          put_element(*families_[j], k, a, bv);
          break;
        }
        Value out;
        out.lo = b_.scalar();
        out.hi = n.out_bits == 64 ? b_.scalar() : out.lo;
        families_[j]->element(b_, a, bv, out);
        if (n.out_bits < 32 && n.op != OpKind::popcount) b_.and_(out.lo, out.lo, imm((1u << n.out_bits) - 1));
        nodes[j] = out;
      }
    }
    const Reg address = b_.scalar();
    b_.ishl(address, unit_, imm(4));
    b_.store_raw(uav(0), address, out_);
  }

  // The output node's element k, placed in out_ (a bit field of a word for narrow outputs).
  void put_element(const shader::Family& f, unsigned k, const Value& a, const Value& bv) {
    if (out_bits_ == 64) {
      f.element(b_, a, bv, {out_word(2 * k), out_word(2 * k + 1)});
    } else if (out_bits_ == 32) {
      const Reg word = out_word(k);
      f.element(b_, a, bv, {word, word});
    } else {
      const Reg r = b_.scalar();
      const Reg word = out_word(k / per_word_);
      f.element(b_, a, bv, {r, r});
      b_.bfi(word, imm(out_bits_), imm(k % per_word_ * out_bits_), r, word);
    }
  }

  const GraphKernelKey& k_;
  unsigned out_bits_, per_unit_ = 0, per_word_ = 0;
  std::vector<std::unique_ptr<shader::Family>> families_;
  std::vector<Value> leaf_values_;
  std::vector<unsigned> slots_;
  ProgramBuilder b_;
  Reg units_, unit_, out_;
};

dxbc::Program graph_program(const GraphKernelKey& key) {
  if (std::string why = graph_kernel_refusal(key); !why.empty()) throw Error(Errc::internal, "no graph kernel: " + why);
  return GraphWriter(key).write();
}

}  // namespace

std::string graph_kernel_refusal(const GraphKernelKey& key) {
  if (key.nodes.empty()) return "a graph of no nodes";
  if (graph_buffer_count(key) > kGraphMaxBuffers)
    return fmt::format("{} input buffers (at most {})", graph_buffer_count(key), kGraphMaxBuffers);
  if (scalar_words(key) > kGraphScalarWords)
    return fmt::format("{} words of one-element inputs (at most {})", scalar_words(key), kGraphScalarWords);
  for (const GraphLeafKey& l : key.leaves)
    if (!valid_width(l.bits)) return fmt::format("a {}-bit input", l.bits);
  for (std::size_t j = 0; j < key.nodes.size(); ++j) {
    const GraphNodeKey& n = key.nodes[j];
    if (op_info(n.op).shader == ShaderFamily::none) return fmt::format("no GPU kernel for {}", op_info(n.op).verb);
    try {
      (void)shader::make_family(node_kernel_key(n));
    } catch (const Error& e) {
      return e.what();
    }
    for (int a = 0; a < op_info(n.op).arity; ++a) {
      const GraphArgKey& arg = n.args[static_cast<std::size_t>(a)];
      if (arg.node ? arg.index >= j : arg.index >= key.leaves.size())
        return fmt::format("node {} reads a value it cannot see", j);
      if (arg_bits(key, arg) != n.in_bits) return fmt::format("node {} reads a value of another width", j);
    }
  }
  // A leaf's elements for one output unit must be whole words (see the top of this file).
  const unsigned out = graph_out_bits(key);
  for (const GraphLeafKey& l : key.leaves)
    if (!l.scalar && (128 / out) * l.bits < 32) return "an input narrower than a word per output unit";
  return {};
}

unsigned graph_out_bits(const GraphKernelKey& key) { return key.nodes.empty() ? 32 : key.nodes.back().out_bits; }

unsigned graph_buffer_count(const GraphKernelKey& key) {
  return static_cast<unsigned>(std::count_if(key.leaves.begin(), key.leaves.end(), [](auto& l) { return !l.scalar; }));
}

std::uint32_t graph_output_units(const GraphKernelKey& key, std::uint32_t count) {
  return output_units(unit_key(key), count);
}

DispatchGrid graph_dispatch_grid(const GraphKernelKey& key, std::uint32_t count) {
  return dispatch_grid(unit_key(key), count);
}

std::string to_string(const GraphKernelKey& key) {
  return fmt::format("graph_{}n_{}b{}s_u{}", key.nodes.size(), graph_buffer_count(key),
                     key.leaves.size() - graph_buffer_count(key), graph_out_bits(key));
}

std::vector<GraphKernelKey> example_graph_kernel_keys() {
  using Z = ShiftOverflow;
  const GraphArgKey l0{false, 0}, l1{false, 1}, l2{false, 2}, n0{true, 0}, n1{true, 1};
  std::vector<GraphKernelKey> keys;
  // popcount(a ^ b) & s: 32-bit buffers, 8-bit counts and scalar.
  keys.push_back({{{32, false}, {32, false}, {8, true}},
                  {{OpKind::bit_xor, 32, 32, Z::zero, {l0, l1}},
                   {OpKind::popcount, 32, 8, Z::zero, {n0, {}}},
                   {OpKind::bit_and, 8, 8, Z::zero, {n1, l2}}}});
  // popcount(a ^ s) >> c: a 64-bit buffer, a 64-bit scalar, 32-bit counts shifted (directml).
  keys.push_back({{{64, false}, {64, true}, {32, false}},
                  {{OpKind::bit_xor, 64, 64, Z::zero, {l0, l1}},
                   {OpKind::popcount, 64, 32, Z::zero, {n0, {}}},
                   {OpKind::shr, 32, 32, Z::directml, {n1, l2}}}});
  // (a << n) ^ ~c for 16 bits (wrap) and (a >> n) << c for 64 bits (zero, then directml).
  keys.push_back({{{16, false}, {16, true}, {16, false}},
                  {{OpKind::shl, 16, 16, Z::wrap, {l0, l1}},
                   {OpKind::bit_not, 16, 16, Z::zero, {l2, {}}},
                   {OpKind::bit_xor, 16, 16, Z::zero, {n0, n1}}}});
  keys.push_back({{{64, false}, {64, true}, {64, false}},
                  {{OpKind::shr, 64, 64, Z::zero, {l0, l1}}, {OpKind::shl, 64, 64, Z::directml, {n0, l2}}}});
  // popcount(a) | popcount(b) to 8-bit counts from 16- and 64-bit buffers (32 words a unit).
  keys.push_back({{{16, false}, {64, false}},
                  {{OpKind::popcount, 16, 8, Z::zero, {l0, {}}},
                   {OpKind::popcount, 64, 8, Z::zero, {l1, {}}},
                   {OpKind::bit_or, 8, 8, Z::zero, {n0, n1}}}});
  // x0 & x1 | x2 ^ ... over eight 8-bit buffers, ~ at the end.
  GraphKernelKey eight;
  for (std::uint32_t i = 0; i < kGraphMaxBuffers; ++i) eight.leaves.push_back({8, false});
  const OpKind logic[] = {OpKind::bit_and, OpKind::bit_or, OpKind::bit_xor};
  eight.nodes.push_back({OpKind::bit_and, 8, 8, Z::zero, {l0, l1}});
  for (std::uint32_t i = 2; i < kGraphMaxBuffers; ++i)
    eight.nodes.push_back({logic[i % 3], 8, 8, Z::zero, {GraphArgKey{true, i - 2}, GraphArgKey{false, i}}});
  eight.nodes.push_back({OpKind::bit_not, 8, 8, Z::zero, {GraphArgKey{true, kGraphMaxBuffers - 2}, GraphArgKey{}}});
  keys.push_back(eight);
  // No buffer: popcount(s) ^ t, 32-bit scalars.
  keys.push_back({{{32, true}, {32, true}},
                  {{OpKind::popcount, 32, 32, Z::zero, {l0, {}}}, {OpKind::bit_xor, 32, 32, Z::zero, {n0, l1}}}});
  return keys;
}

std::vector<std::uint8_t> build_graph_kernel(const GraphKernelKey& key) { return dxbc::assemble(graph_program(key)); }

std::string graph_kernel_listing(const GraphKernelKey& key) { return dxbc::listing(graph_program(key)); }

}  // namespace dmlbits::gpu
