#include "fused.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "dmlbits/error.hpp"
#include "kernels.hpp"

namespace dmlbits {

// Uniform values (constants, scalar inputs, nodes over them alone) are held as zero-extended
// 64-bit words and handed to the kernels as broadcast operands by address: a kernel reads the
// element's `width` bytes from there, the low bytes on a little-endian machine.
static_assert(std::endian::native == std::endian::little, "uniform values are read through their low bytes");

namespace {

constexpr std::uint64_t width_mask(unsigned bytes) {
  return bytes >= 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (bytes * 8)) - 1;
}

bool is_width(unsigned w) { return w == 1 || w == 2 || w == 4 || w == 8; }

std::uint64_t load_element(const std::byte* p, unsigned width) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, width);
  return v;
}

// Where a per-tile node reads an operand from.
struct Source {
  enum class Kind : std::uint8_t { run, buffer, uniform };
  Kind kind = Kind::uniform;
  std::uint32_t index = 0;  // run: the graph input; buffer: the tile buffer; uniform: the value slot
  unsigned width = 0;       // run: the input's element bytes
};

// A node computed on every tile.
struct Step {
  OpKind op{};
  unsigned width = 0, out_width = 0;
  bool unary = false;
  KernelFn fn = nullptr;  // nullptr: the reference function, element by element
  KernelParams params;
  Source a, b;
  std::uint32_t buffer = 0;  // the tile buffer it writes; the last step writes the output
};

// A node computed once per run: its operands are uniform values.
struct UniformStep {
  OpKind op{};
  unsigned width = 0, out_width = 0;
  ShiftOverflow mode{};
  std::uint32_t a = 0, b = 0, result = 0;  // value slots
};

std::uint64_t evaluate(OpKind op, std::uint64_t a, std::uint64_t b, unsigned width, unsigned out_width,
                       ShiftOverflow mode) {
  return op_info(op).reference(a, b, width * 8, mode) & width_mask(out_width);
}

}  // namespace

struct FusedRunner::Plan {
  std::size_t input_count = 0;
  std::vector<std::uint64_t> values;                        // uniform slots: constants filled, others 0
  std::vector<std::pair<std::uint32_t, unsigned>> scalars;  // (input, width) of each scalar input read
  std::vector<std::uint32_t> scalar_slots;                  // the slot of each scalars[] entry
  std::vector<UniformStep> uniform_steps;
  std::vector<Step> steps;  // empty: the result is uniform
  std::uint32_t result_slot = 0;
  unsigned out_width = 0;
  std::size_t tile = 64;         // elements per tile
  std::size_t buffer_bytes = 0;  // bytes of one tile buffer
  std::size_t buffers = 0;       // tile buffers per thread
  std::size_t stream_min_bytes = 0;
  // The register path (fused_loops.hpp), where the program has one: whole blocks of `block`
  // elements through `loop`, the rest of a part through the tiles.
  cpu::FusedLoopFn loop = nullptr;
  std::vector<cpu::FusedCode> codes;                // each step's
  std::vector<std::pair<Source, Source>> operands;  // each step's: its own, but for and_not
  std::size_t block = 0;
  std::size_t splats = 0;  // uniform operands of the steps: a block each per thread
  std::size_t register_min_bytes = 0;
};

namespace {

[[noreturn]] void malformed(std::size_t node, const std::string& what) {
  throw Error(Errc::internal, fmt::format("fused program: node {}: {}", node, what));
}

cpu::FusedCode fused_code(OpKind op, ShiftOverflow mode) {
  const bool left = op == OpKind::shl;
  switch (op) {
    case OpKind::bit_and:
      return cpu::FusedCode::bit_and;
    case OpKind::bit_or:
      return cpu::FusedCode::bit_or;
    case OpKind::bit_xor:
      return cpu::FusedCode::bit_xor;
    case OpKind::bit_not:
      return cpu::FusedCode::bit_not;
    case OpKind::popcount:
      return cpu::FusedCode::popcount;
    case OpKind::shl:
    case OpKind::shr:
      break;
  }
  switch (mode) {
    case ShiftOverflow::zero:
      break;
    case ShiftOverflow::wrap:
      return left ? cpu::FusedCode::shl_wrap : cpu::FusedCode::shr_wrap;
    case ShiftOverflow::directml:
      return left ? cpu::FusedCode::shl_directml : cpu::FusedCode::shr_directml;
  }
  return left ? cpu::FusedCode::shl_zero : cpu::FusedCode::shr_zero;
}

const cpu::FusedLoopRow* find_loop(std::span<const cpu::FusedLoopRow> rows, unsigned width, unsigned out_width,
                                   bool popcount) {
  for (const cpu::FusedLoopRow& r : rows)
    if (r.width == width && r.out_width == out_width && r.popcount == popcount) return &r;
  return nullptr;
}

}  // namespace

// The register path takes programs whose steps are all of one width, the last one perhaps a
// popcount into a width a popcount kernel writes; the popcount with the set's best counter (the
// extension's where this CPU has it, as the kernel table prefers them).
void FusedRunner::choose_loop(Plan& p, Isa isa) {
  if (isa == Isa::scalar || p.steps.empty()) return;
  const unsigned width = p.steps.front().width;
  const std::size_t last = p.steps.size() - 1;
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const Step& s = p.steps[k];
    if (s.width != width) return;
    if (k < last && (s.op == OpKind::popcount || s.out_width != width)) return;
  }
  const Step& end = p.steps[last];
  const bool popcount = end.op == OpKind::popcount;
  const cpu::FusedLoopRow* row = nullptr;
  if (isa == Isa::avx512) {
    const CpuFeatures& f = cpu_features();
    if (popcount && width >= 4 && f.avx512vpopcntdq)
      row = find_loop(cpu::avx512_vpopcntdq_fused_loops(), width, end.out_width, popcount);
    if (popcount && width <= 2 && f.avx512bitalg)
      row = find_loop(cpu::avx512_bitalg_fused_loops(), width, end.out_width, popcount);
    if (!row) row = find_loop(cpu::avx512_fused_loops(), width, end.out_width, popcount);
  } else {
    row = find_loop(cpu::avx2_fused_loops(), width, end.out_width, popcount);
  }
  if (!row) return;
  p.loop = row->fn;
  p.block = cpu::kFusedBlockBytes / width;
  for (const Step& s : p.steps) {
    p.codes.push_back(fused_code(s.op, s.params.shift_overflow));
    p.operands.emplace_back(s.a, s.unary ? s.a : s.b);
  }
  // x & ~y, where ~y is read by that `and` alone and y is a run or uniform (so still there when
  // the `and` runs): one and_not, the `not` skipped, so ~y never goes through a block buffer.
  std::vector<std::size_t> writer(p.buffers, 0), readers(p.steps.size(), 0);
  std::vector<std::array<std::size_t, 2>> producers(p.steps.size(), {last + 1, last + 1});
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    const Step& s = p.steps[k];
    for (int o = 0; o < (s.unary ? 1 : 2); ++o) {
      const Source& src = o == 0 ? s.a : s.b;
      if (src.kind != Source::Kind::buffer) continue;
      producers[k][o] = writer[src.index];
      ++readers[writer[src.index]];
    }
    if (k < last) writer[s.buffer] = k;
  }
  for (std::size_t k = 0; k < p.steps.size(); ++k) {
    if (p.steps[k].op != OpKind::bit_and) continue;
    for (int o = 0; o < 2; ++o) {
      const std::size_t r = producers[k][o];
      if (r > last || p.steps[r].op != OpKind::bit_not || readers[r] != 1 || p.steps[r].a.kind == Source::Kind::buffer)
        continue;
      const Step& s = p.steps[k];
      p.operands[k] = {o == 0 ? s.b : s.a, p.steps[r].a};
      p.codes[k] = cpu::FusedCode::and_not;
      p.codes[r] = cpu::FusedCode::skip;
      break;
    }
  }
  for (std::size_t k = 0; k < p.steps.size(); ++k)
    if (p.codes[k] != cpu::FusedCode::skip)
      for (const Source* src : {&p.operands[k].first, &p.operands[k].second})
        if (src->kind == Source::Kind::uniform) ++p.splats;
}

FusedRunner::FusedRunner(FusedProgram program, Isa isa, bool per_operation_choice, FusedOptions options)
    : plan_(std::make_unique<Plan>()) {
  require_isa(isa);
  Plan& p = *plan_;
  const auto& nodes = program.nodes;
  const std::size_t inputs = program.input_widths.size();
  if (nodes.empty()) throw Error(Errc::internal, "fused program: no nodes");
  if (nodes.size() > kMaxFusedNodes)
    throw Error(Errc::internal, fmt::format("fused program: {} nodes, at most {}", nodes.size(), kMaxFusedNodes));
  if (program.input_is_scalar.size() != inputs)
    throw Error(Errc::internal, fmt::format("fused program: {} input widths but {} scalar flags", inputs,
                                            program.input_is_scalar.size()));
  for (std::size_t i = 0; i < inputs; ++i)
    if (!is_width(program.input_widths[i]))
      throw Error(Errc::internal, fmt::format("fused program: input {} has width {}", i, program.input_widths[i]));
  p.input_count = inputs;

  // Every operand names something that exists before its node, of the node's width.
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    const FusedNode& node = nodes[k];
    if (static_cast<std::size_t>(node.op) >= kOpCount) malformed(k, "not an operator");
    if (!is_width(node.width) || !is_width(node.out_width))
      malformed(k, fmt::format("widths {} and {}", node.width, node.out_width));
    if (node.op != OpKind::popcount && node.out_width != node.width)
      malformed(k, fmt::format("output width {} for operands of width {}", node.out_width, node.width));
    const int arity = op_info(node.op).arity;
    for (int o = 0; o < arity; ++o) {
      const FusedValue& v = o == 0 ? node.a : node.b;
      unsigned w = 0;
      switch (v.kind) {
        case FusedValue::Kind::input:
          if (v.index >= inputs) malformed(k, fmt::format("input {} of {}", v.index, inputs));
          w = program.input_widths[v.index];
          break;
        case FusedValue::Kind::node:
          if (v.index >= k) malformed(k, fmt::format("operand node {} is not an earlier node", v.index));
          w = nodes[v.index].out_width;
          break;
        case FusedValue::Kind::constant:
          if ((v.bits & ~width_mask(node.width)) != 0)
            malformed(k, fmt::format("constant {:#x} wider than {} bytes", v.bits, node.width));
          w = node.width;
          break;
        default:
          malformed(k, "operand of no kind");
      }
      if (w != node.width) malformed(k, fmt::format("operand of width {} for a node of width {}", w, node.width));
    }
  }

  // The nodes the result depends on.
  std::vector<bool> needed(nodes.size(), false);
  needed.back() = true;
  for (std::size_t k = nodes.size(); k-- > 0;) {
    if (!needed[k]) continue;
    const int arity = op_info(nodes[k].op).arity;
    for (int o = 0; o < arity; ++o) {
      const FusedValue& v = o == 0 ? nodes[k].a : nodes[k].b;
      if (v.kind == FusedValue::Kind::node) needed[v.index] = true;
    }
  }

  // Each needed node becomes a uniform slot (folded here, or computed once per run) or a step.
  constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();
  std::vector<std::uint32_t> node_slot(nodes.size(), kNone);  // uniform nodes' slots
  std::vector<std::uint32_t> node_step(nodes.size(), kNone);  // per-tile nodes' steps
  std::vector<bool> slot_known;                               // the slot's value is known here
  std::vector<std::uint32_t> input_slot(inputs, kNone);
  const auto new_slot = [&](std::uint64_t value, bool known) {
    p.values.push_back(value);
    slot_known.push_back(known);
    return static_cast<std::uint32_t>(p.values.size() - 1);
  };
  // An operand as a source: a run, a step's buffer (its step index for now), or a uniform slot.
  const auto source_of = [&](const FusedValue& v) -> Source {
    switch (v.kind) {
      case FusedValue::Kind::input:
        if (!program.input_is_scalar[v.index]) return {Source::Kind::run, v.index, program.input_widths[v.index]};
        if (input_slot[v.index] == kNone) {
          input_slot[v.index] = new_slot(0, false);
          p.scalars.emplace_back(v.index, program.input_widths[v.index]);
          p.scalar_slots.push_back(input_slot[v.index]);
        }
        return {Source::Kind::uniform, input_slot[v.index], 0};
      case FusedValue::Kind::node:
        if (node_slot[v.index] != kNone) return {Source::Kind::uniform, node_slot[v.index], 0};
        return {Source::Kind::buffer, node_step[v.index], 0};
      case FusedValue::Kind::constant:
        break;
    }
    return {Source::Kind::uniform, new_slot(v.bits, true), 0};
  };
  for (std::size_t k = 0; k < nodes.size(); ++k) {
    if (!needed[k]) continue;
    const FusedNode& node = nodes[k];
    const bool unary = op_info(node.op).arity == 1;
    const Source a = source_of(node.a);
    const Source b = unary ? Source{} : source_of(node.b);  // a unary node's b counts as uniform
    if (a.kind == Source::Kind::uniform && b.kind == Source::Kind::uniform) {
      if (slot_known[a.index] && (unary || slot_known[b.index])) {
        node_slot[k] = new_slot(evaluate(node.op, p.values[a.index], unary ? 0 : p.values[b.index], node.width,
                                         node.out_width, node.shift_overflow),
                                true);
      } else {
        node_slot[k] = new_slot(0, false);
        p.uniform_steps.push_back({node.op, node.width, node.out_width, node.shift_overflow, a.index,
                                   unary ? a.index : b.index, node_slot[k]});
      }
      continue;
    }
    Step s;
    s.op = node.op;
    s.width = node.width;
    s.out_width = node.out_width;
    s.unary = unary;
    s.a = a;
    s.b = b;
    s.params.shift_overflow = node.shift_overflow;
    s.params.stream_min_bytes = std::numeric_limits<std::size_t>::max();  // intermediates stay in the caches
    const Operands layout = unary                             ? Operands::vectors
                            : a.kind == Source::Kind::uniform ? Operands::a_scalar
                            : b.kind == Source::Kind::uniform ? Operands::b_scalar
                                                              : Operands::vectors;
    const KernelInfo* kernel = per_operation_choice ? dispatch_kernel(node.op, node.width, node.out_width, isa, layout)
                                                    : select_kernel(node.op, node.width, node.out_width, isa, layout);
    s.fn = kernel ? kernel->fn : nullptr;
    node_step[k] = static_cast<std::uint32_t>(p.steps.size());
    p.steps.push_back(s);
  }
  const FusedNode& last = nodes.back();
  p.out_width = last.out_width;
  p.result_slot = node_slot.back() == kNone ? 0 : node_slot.back();
  p.stream_min_bytes = options.stream_min_bytes;

  // Tile buffers: a step takes a free one (never one of its own operands'), and its operands'
  // buffers are freed after their last reader. The last step writes the output.
  std::vector<std::size_t> last_use(p.steps.size(), 0);
  for (std::size_t s = 0; s < p.steps.size(); ++s)
    for (const Source* src : {&p.steps[s].a, &p.steps[s].b})
      if (src->kind == Source::Kind::buffer) last_use[src->index] = s;
  std::vector<std::uint32_t> step_buffer(p.steps.size(), 0);
  std::vector<std::uint32_t> free_buffers;
  std::uint32_t buffers = 0;
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    Step& step = p.steps[s];
    for (Source* src : {&step.a, &step.b})
      if (src->kind == Source::Kind::buffer) src->index = step_buffer[src->index];
    if (s + 1 < p.steps.size()) {
      if (free_buffers.empty()) {
        step_buffer[s] = buffers++;
      } else {
        step_buffer[s] = free_buffers.back();
        free_buffers.pop_back();
      }
      step.buffer = step_buffer[s];
    }
    for (std::size_t r = 0; r < s; ++r)
      if (last_use[r] == s && r + 1 < p.steps.size() && step_buffer[r] != kNone) {
        free_buffers.push_back(step_buffer[r]);
        step_buffer[r] = kNone;  // freed once even when both operands read it
      }
  }
  p.buffers = buffers;
  if (options.register_path) choose_loop(p, isa);
  p.register_min_bytes = options.register_min_bytes;

  // The tile: tile_bytes of the widest value the steps read or write.
  unsigned widest = 1;
  for (const Step& s : p.steps) widest = std::max({widest, s.width, s.out_width});
  p.tile = std::max<std::size_t>(64, options.tile_bytes / widest / 64 * 64);
  p.buffer_bytes = p.tile * widest;
}

FusedRunner::~FusedRunner() = default;
FusedRunner::FusedRunner(FusedRunner&&) noexcept = default;
FusedRunner& FusedRunner::operator=(FusedRunner&&) noexcept = default;

std::size_t FusedRunner::tile_elements() const { return plan_->tile; }
std::size_t FusedRunner::kernel_nodes() const { return plan_->steps.size(); }
std::size_t FusedRunner::tile_buffers() const { return plan_->buffers; }
bool FusedRunner::register_path() const { return plan_->loop != nullptr; }

namespace {

// What one run shares between its threads.
struct RunContext {
  std::span<const void* const> inputs;
  const std::uint64_t* values;  // the uniform slots, filled for this run
  std::byte* out;
  std::vector<KernelParams> params;  // each step's, with this run's streaming decision
};

// A step without a kernel: its reference function, element by element (a stride of 0 reads a
// uniform operand).
void reference_step(const Step& s, std::size_t m, const std::byte* a, std::size_t a_stride, const std::byte* b,
                    std::size_t b_stride, std::byte* out) {
  const ReferenceFn f = op_info(s.op).reference;
  const unsigned bits = s.width * 8;
  for (std::size_t i = 0; i < m; ++i) {
    const std::uint64_t x = load_element(a + i * a_stride, s.width);
    const std::uint64_t y = s.unary ? 0 : load_element(b + i * b_stride, s.width);
    const std::uint64_t r = f(x, y, bits, s.params.shift_overflow);
    std::memcpy(out + i * s.out_width, &r, s.out_width);
  }
}

}  // namespace

void FusedRunner::run(std::uint64_t n, std::span<const void* const> inputs, void* out, unsigned threads) const {
  const Plan& p = *plan_;
  if (inputs.size() != p.input_count)
    throw Error(Errc::internal, fmt::format("fused run: {} inputs for a program of {}", inputs.size(), p.input_count));
  if (n == 0) return;
  // The uniform values of this run: scalar inputs, then the nodes over them.
  std::vector<std::uint64_t> values = p.values;
  for (std::size_t i = 0; i < p.scalars.size(); ++i)
    values[p.scalar_slots[i]] =
        load_element(static_cast<const std::byte*>(inputs[p.scalars[i].first]), p.scalars[i].second);
  for (const UniformStep& u : p.uniform_steps)
    values[u.result] = evaluate(u.op, values[u.a], values[u.b], u.width, u.out_width, u.mode);

  auto* const o = static_cast<std::byte*>(out);
  if (p.steps.empty()) {  // a uniform result: its element repeated
    const std::uint64_t v = values[p.result_slot];
    for (std::uint64_t i = 0; i < n; ++i) std::memcpy(o + i * p.out_width, &v, p.out_width);
    return;
  }

  RunContext c{inputs, values.data(), o, {}};
  // Large outputs stream as a single operator's do (a tile alone would never reach the bound).
  // The steps that read the inputs do not prefetch them: neither a prefetch of the next tile
  // before each tile nor the kernels' own prefetching (tried) was faster on the AVX-512 host
  // (testdata/benchmarks.md, "Fused expressions (CPU)").
  for (const Step& s : p.steps) c.params.push_back(s.params);
  if (n * p.out_width >= p.stream_min_bytes) c.params.back().stream_min_bytes = 0;

  // The tiles of output elements [begin, end), on one thread with its tile buffers.
  const auto run_part = [&p, &c](std::byte* scratch, std::uint64_t begin, std::uint64_t end) {
    const auto src = [&](const Source& s, std::uint64_t pos) -> const std::byte* {
      switch (s.kind) {
        case Source::Kind::run:
          return static_cast<const std::byte*>(c.inputs[s.index]) + pos * s.width;
        case Source::Kind::buffer:
          return scratch + s.index * p.buffer_bytes;
        case Source::Kind::uniform:
          break;
      }
      return reinterpret_cast<const std::byte*>(c.values + s.index);
    };
    const std::size_t last = p.steps.size() - 1;
    for (std::uint64_t pos = begin; pos < end; pos += p.tile) {
      const auto m = static_cast<std::size_t>(std::min<std::uint64_t>(p.tile, end - pos));
      for (std::size_t k = 0; k <= last; ++k) {
        const Step& s = p.steps[k];
        const std::byte* a = src(s.a, pos);
        const std::byte* b = s.unary ? nullptr : src(s.b, pos);
        std::byte* dst = k == last ? c.out + pos * s.out_width : scratch + s.buffer * p.buffer_bytes;
        if (s.fn) {
          s.fn(m, a, b, dst, c.params[k]);
        } else {
          reference_step(s, m, a, s.a.kind == Source::Kind::uniform ? 0 : s.width, b,
                         s.b.kind == Source::Kind::uniform ? 0 : s.width, dst);
        }
      }
    }
  };

  // The register path: whole blocks from the first element whose output address is aligned to
  // 64 bytes where the output streams (the elements before it, and the rest after the last whole
  // block, through the tiles).
  const bool stream = n * p.out_width >= p.stream_min_bytes;
  const std::size_t tile_scratch = p.buffers * p.buffer_bytes;
  const bool registers = p.loop && n * p.out_width >= p.register_min_bytes;
  const auto run_range = [&p, &c, &run_part, stream, registers, tile_scratch](std::byte* scratch, std::uint64_t begin,
                                                                              std::uint64_t end) {
    if (!registers) return run_part(scratch, begin, end);
    std::uint64_t head = begin;
    bool aligned = true;
    if (stream) {
      const auto misalignment = reinterpret_cast<std::uintptr_t>(c.out + begin * p.out_width) % 64;
      const std::size_t head_bytes = misalignment == 0 ? 0 : 64 - misalignment;
      aligned = head_bytes % p.out_width == 0;
      if (aligned) head = std::min<std::uint64_t>(end, begin + head_bytes / p.out_width);
    }
    const std::uint64_t body_end = head + (end - head) / p.block * p.block;
    if (body_end == head) return run_part(scratch, begin, end);
    if (head > begin) run_part(scratch, begin, head);
    // Block buffers of the steps, then a block of each uniform operand's value repeated.
    std::byte* const blocks = scratch + tile_scratch;
    std::byte* splat = blocks + p.buffers * cpu::kFusedBlockBytes;
    // On the stack: nothing here allocates, so nothing throws on a worker thread.
    std::array<cpu::FusedLoopStep, kMaxFusedNodes> steps;
    const auto operand = [&](const Source& src, unsigned width) -> cpu::FusedOperand {
      switch (src.kind) {
        case Source::Kind::run:
          return {static_cast<const std::byte*>(c.inputs[src.index]), true};
        case Source::Kind::buffer:
          return {blocks + src.index * cpu::kFusedBlockBytes, false};
        case Source::Kind::uniform:
          break;
      }
      for (std::size_t off = 0; off < cpu::kFusedBlockBytes; off += width)
        std::memcpy(splat + off, c.values + src.index, width);
      splat += cpu::kFusedBlockBytes;
      return {splat - cpu::kFusedBlockBytes, false};
    };
    for (std::size_t k = 0; k < p.steps.size(); ++k) {
      const Step& s = p.steps[k];
      steps[k].code = p.codes[k];
      if (p.codes[k] == cpu::FusedCode::skip) continue;
      steps[k].a = operand(p.operands[k].first, s.width);
      steps[k].b = s.unary ? steps[k].a : operand(p.operands[k].second, s.width);
      steps[k].dst = blocks + s.buffer * cpu::kFusedBlockBytes;
    }
    p.loop({.steps = steps.data(),
            .step_count = p.steps.size(),
            .begin = head,
            .end = body_end,
            .out = c.out,
            .stream = stream && aligned});
    if (body_end < end) run_part(scratch, body_end, end);
  };

  // Parts on 64-element boundaries (run_in_parts); empty ones get no thread.
  const unsigned parts = std::max(1u, threads);
  // Every thread's tile buffers, allocated here so that a failure throws on the calling thread.
  const std::size_t scratch_bytes =
      std::max<std::size_t>(tile_scratch + (p.loop ? (p.buffers + p.splats) * cpu::kFusedBlockBytes : 0), 64);
  const std::size_t total = scratch_bytes * parts;
  struct Free {
    void operator()(std::byte* q) const { ::operator delete[](q, std::align_val_t{64}); }
  };
  const std::unique_ptr<std::byte, Free> scratch(
      static_cast<std::byte*>(::operator new[](total, std::align_val_t{64})));
  run_in_parts(n, parts, [&](unsigned t, std::uint64_t begin, std::uint64_t end) {
    run_range(scratch.get() + t * scratch_bytes, begin, end);
  });
}

}  // namespace dmlbits
