// The typed program builder: operands, instructions with their checks, declarations.
#include <algorithm>
#include <string>

#include "dxbc.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits::dxbc {
namespace {

[[noreturn]] void misuse(const std::string& what) { throw Error(Errc::internal, "DXBC builder: " + what); }

bool is_dst_type(OperandType t) { return t == OperandType::temp || t == OperandType::null || t == OperandType::uav; }

void check_dst(const Dst& d, const char* ins) {
  if (!is_dst_type(d.op.type)) misuse(std::string(ins) + ": destination must be a temp, a UAV or null");
  if (d.op.type == OperandType::temp && (d.op.mask.bits == 0 || d.op.mask.bits > 15))
    misuse(std::string(ins) + ": empty write mask");
}

void check_src(const Src& s, const char* ins) {
  if (s.op.type == OperandType::null || s.op.type == OperandType::uav)
    misuse(std::string(ins) + ": null or UAV as a source");
}

void check_scalar(const Src& s, const char* ins) {
  check_src(s, ins);
  const bool one = s.op.components == 1 || s.op.selection == Selection::select1;
  if (!one) misuse(std::string(ins) + ": condition must be a single component");
}

}  // namespace

Mask mask_first(unsigned n) {
  if (n < 1 || n > 4) misuse("mask of " + std::to_string(n) + " components");
  return Mask{static_cast<std::uint8_t>((1u << n) - 1)};
}

Reg::operator Dst() const {
  Operand o;
  o.type = OperandType::temp;
  o.components = 4;
  o.selection = Selection::mask;
  o.mask = mask;
  o.index_dims = 1;
  o.index[0] = index;
  return Dst{o};
}

Reg::operator Src() const {
  if (mask.bits == 0 || mask.bits > 15) misuse("source register with an empty mask");
  Operand o;
  o.type = OperandType::temp;
  o.components = 4;
  o.index_dims = 1;
  o.index[0] = index;
  if (mask.count() == 1) {
    o.selection = Selection::select1;
    o.swizzle.c[0] = static_cast<std::uint8_t>(mask.first());
  } else {
    // Components keep their positions; unused positions repeat the first (r1.xy -> r1.xyxx).
    o.selection = Selection::swizzle;
    for (unsigned i = 0; i < 4; ++i)
      o.swizzle.c[i] = static_cast<std::uint8_t>((mask.bits & (1u << i)) ? i : mask.first());
  }
  return Src{o};
}

Dst null_dst() {
  Operand o;
  o.type = OperandType::null;
  o.components = 0;
  return Dst{o};
}

Src imm(std::uint32_t v) {
  Operand o;
  o.type = OperandType::immediate32;
  o.components = 1;
  o.imm[0] = v;
  return Src{o};
}

Src imm4(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d) {
  Operand o;
  o.type = OperandType::immediate32;
  o.components = 4;
  o.selection = Selection::mask;  // immediates carry no selection; fxc leaves the bits 0
  o.imm = {a, b, c, d};
  return Src{o};
}

Src cb(std::uint32_t slot, std::uint32_t vec4, unsigned component) {
  if (component > 3) misuse("constant buffer component " + std::to_string(component));
  Operand o;
  o.type = OperandType::constant_buffer;
  o.components = 4;
  o.selection = Selection::select1;
  o.swizzle.c[0] = static_cast<std::uint8_t>(component);
  o.index_dims = 2;
  o.index[0] = slot;
  o.index[1] = vec4;
  return Src{o};
}

Src input(OperandType type, unsigned component) {
  if (component > 3) misuse("input component " + std::to_string(component));
  Operand o;
  o.type = type;
  o.components = 4;
  o.selection = Selection::select1;
  o.swizzle.c[0] = static_cast<std::uint8_t>(component);
  o.index_dims = 0;
  return Src{o};
}

ProgramBuilder::ProgramBuilder(unsigned major, unsigned minor) : major_(major), minor_(minor) {
  // 5.1 would need 3-part register indices and register spaces in the declarations.
  if (major != 5 || minor != 0) misuse("only Shader Model 5.0 is supported");
}

void ProgramBuilder::dcl_global_flags(std::uint32_t flags) {
  global_flags_ = flags;
  has_global_flags_ = true;
}

void ProgramBuilder::dcl_constant_buffer(std::uint32_t slot, std::uint32_t vec4_count, bool dynamic_indexed) {
  if (vec4_count == 0 || vec4_count > 4096) misuse("constant buffer of " + std::to_string(vec4_count) + " vectors");
  Instruction ins;
  ins.opcode = Opcode::dcl_constant_buffer;
  ins.controls = dynamic_indexed ? kDynamicIndexed : 0;
  Operand o;
  o.type = OperandType::constant_buffer;
  o.components = 4;
  o.selection = Selection::swizzle;  // xyzw
  o.index_dims = 2;
  o.index = {slot, vec4_count, 0};
  ins.operands.push_back(o);
  cbs_.push_back(std::move(ins));
}

namespace {
Instruction raw_buffer_decl(Opcode op, OperandType type, std::uint32_t slot) {
  Instruction ins;
  ins.opcode = op;
  Operand o;
  o.type = type;
  o.components = 0;
  o.index_dims = 1;
  o.index[0] = slot;
  ins.operands.push_back(o);
  return ins;
}
}  // namespace

void ProgramBuilder::dcl_resource_raw(std::uint32_t slot) {
  resources_.push_back(raw_buffer_decl(Opcode::dcl_resource_raw, OperandType::resource, slot));
}

void ProgramBuilder::dcl_uav_raw(std::uint32_t slot) {
  uavs_.push_back(raw_buffer_decl(Opcode::dcl_uav_raw, OperandType::uav, slot));
}

void ProgramBuilder::dcl_input(OperandType type, Mask mask) {
  Instruction ins;
  ins.opcode = Opcode::dcl_input;
  Operand o;
  o.type = type;
  if (type == OperandType::thread_id_in_group_flattened) {
    o.components = 0;  // a scalar register, declared without components as fxc does
  } else {
    if (mask.bits == 0 || mask.bits > 15) misuse("dcl_input with an empty mask");
    o.components = 4;
    o.selection = Selection::mask;
    o.mask = mask;
  }
  ins.operands.push_back(o);
  inputs_.push_back(std::move(ins));
}

void ProgramBuilder::dcl_thread_group(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  // D3D11 limits: x, y <= 1024, z <= 64, x*y*z <= 1024.
  if (x == 0 || y == 0 || z == 0 || x > 1024 || y > 1024 || z > 64 || x * y * z > 1024)
    misuse("thread group " + std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z));
  thread_group_ = {x, y, z};
  has_thread_group_ = true;
}

Reg ProgramBuilder::scalar() {
  const std::uint32_t c = next_component_++;
  return Reg{c / 4, Mask{static_cast<std::uint8_t>(1u << (c % 4))}};
}

Reg ProgramBuilder::vector(unsigned n) {
  const std::uint32_t reg = (next_component_ + 3) / 4;
  next_component_ = (reg + 1) * 4;
  return Reg{reg, mask_first(n)};
}

void ProgramBuilder::note_temp(const Operand& o) {
  if (o.type == OperandType::temp) temps_used_ = std::max(temps_used_, o.index[0] + 1);
}

void ProgramBuilder::emit(Opcode op, std::initializer_list<Dst> dsts, std::initializer_list<Src> srcs) {
  Instruction ins;
  ins.opcode = op;
  for (const Dst& d : dsts) {
    ins.operands.push_back(d.op);
    note_temp(d.op);
  }
  ins.dst_count = static_cast<std::uint8_t>(dsts.size());
  for (const Src& s : srcs) {
    ins.operands.push_back(s.op);
    note_temp(s.op);
  }
  code_.push_back(std::move(ins));
}

void ProgramBuilder::emit_checked(Opcode op, const char* ins, std::initializer_list<Dst> dsts,
                                  std::initializer_list<Src> srcs) {
  for (const Dst& d : dsts) check_dst(d, ins);
  for (const Src& s : srcs) check_src(s, ins);
  emit(op, dsts, srcs);
}

#define DMLBITS_DXBC_UNARY(name, op) \
  void ProgramBuilder::name(Dst d, Src a) { emit_checked(Opcode::op, #name, {d}, {a}); }
#define DMLBITS_DXBC_BINARY(name, op) \
  void ProgramBuilder::name(Dst d, Src a, Src b) { emit_checked(Opcode::op, #name, {d}, {a, b}); }

DMLBITS_DXBC_UNARY(mov, mov)
DMLBITS_DXBC_UNARY(not_, not_)
DMLBITS_DXBC_UNARY(countbits, countbits)
DMLBITS_DXBC_BINARY(and_, and_)
DMLBITS_DXBC_BINARY(or_, or_)
DMLBITS_DXBC_BINARY(xor_, xor_)
DMLBITS_DXBC_BINARY(iadd, iadd)
DMLBITS_DXBC_BINARY(ishl, ishl)
DMLBITS_DXBC_BINARY(ushr, ushr)
DMLBITS_DXBC_BINARY(ieq, ieq)
DMLBITS_DXBC_BINARY(ine, ine)
DMLBITS_DXBC_BINARY(ult, ult)
DMLBITS_DXBC_BINARY(uge, uge)
#undef DMLBITS_DXBC_UNARY
#undef DMLBITS_DXBC_BINARY

void ProgramBuilder::movc(Dst d, Src cond, Src if_true, Src if_false) {
  emit_checked(Opcode::movc, "movc", {d}, {cond, if_true, if_false});
}

void ProgramBuilder::imul(Dst lo, Src a, Src b) {
  if (lo.op.type == OperandType::null) misuse("imul: the low half must have a destination");
  emit_checked(Opcode::imul, "imul", {null_dst(), lo}, {a, b});
}

void ProgramBuilder::udiv(Dst quotient, Dst remainder, Src a, Src b) {
  emit_checked(Opcode::udiv, "udiv", {quotient, remainder}, {a, b});
}

void ProgramBuilder::ubfe(Dst d, Src width, Src offset, Src a) {
  emit_checked(Opcode::ubfe, "ubfe", {d}, {width, offset, a});
}

void ProgramBuilder::bfi(Dst d, Src width, Src offset, Src insert, Src base) {
  emit_checked(Opcode::bfi, "bfi", {d}, {width, offset, insert, base});
}

void ProgramBuilder::ld_raw(Reg d, Src byte_address, RawBuffer buffer) {
  check_scalar(byte_address, "ld_raw");
  if (d.mask.bits == 0 || d.mask.bits > 15) misuse("ld_raw: empty write mask");
  Operand res;
  res.type = buffer.type;
  res.components = 4;
  res.selection = Selection::swizzle;
  res.index_dims = 1;
  res.index[0] = buffer.slot;
  // The k-th written component receives word k.
  res.swizzle.c = {0, 0, 0, 0};
  unsigned k = 0;
  for (unsigned i = 0; i < 4; ++i)
    if (d.mask.bits & (1u << i)) res.swizzle.c[i] = static_cast<std::uint8_t>(k++);
  emit(Opcode::ld_raw, {Dst(d)}, {byte_address, Src{res}});
}

void ProgramBuilder::ld_raw_indexable(Reg d, Src byte_address, RawBuffer buffer) {
  ld_raw(d, byte_address, buffer);
  // Extended opcode tokens: resource dimension (type 2) raw_buffer (11), chained to the
  // resource return type (type 3) mixed (6) for each of the four components.
  code_.back().extended = {0x80000000u | (11u << 6) | 2u, (0x6666u << 6) | 3u};
}

void ProgramBuilder::store_raw(RawBuffer buffer, Src byte_address, Reg value) {
  if (buffer.type != OperandType::uav) misuse("store_raw to a read-only buffer");
  check_scalar(byte_address, "store_raw");
  const unsigned n = value.mask.count();
  if (n == 0) misuse("store_raw: empty value");
  Operand dst;
  dst.type = OperandType::uav;
  dst.components = 4;
  dst.selection = Selection::mask;
  dst.mask = mask_first(n);
  dst.index_dims = 1;
  dst.index[0] = buffer.slot;
  Src v = value;
  if (n > 1) {
    // Word k comes from the k-th component of the value.
    unsigned k = 0;
    for (unsigned i = 0; i < 4; ++i)
      if (value.mask.bits & (1u << i)) v.op.swizzle.c[k++] = static_cast<std::uint8_t>(i);
    for (; k < 4; ++k) v.op.swizzle.c[k] = static_cast<std::uint8_t>(value.mask.first());
  }
  emit(Opcode::store_raw, {Dst{dst}}, {byte_address, v});
}

void ProgramBuilder::if_nz(Src cond) {
  check_scalar(cond, "if_nz");
  emit(Opcode::if_, {}, {cond});
  code_.back().controls = kTestNonZero;
  open_blocks_.push_back(Opcode::if_);
}

void ProgramBuilder::if_z(Src cond) {
  check_scalar(cond, "if_z");
  emit(Opcode::if_, {}, {cond});
  open_blocks_.push_back(Opcode::if_);
}

void ProgramBuilder::else_() {
  if (open_blocks_.empty() || open_blocks_.back() != Opcode::if_) misuse("else without if");
  open_blocks_.back() = Opcode::else_;
  emit(Opcode::else_, {}, {});
}

void ProgramBuilder::endif() {
  if (open_blocks_.empty() || (open_blocks_.back() != Opcode::if_ && open_blocks_.back() != Opcode::else_))
    misuse("endif without if");
  open_blocks_.pop_back();
  emit(Opcode::endif, {}, {});
}

void ProgramBuilder::loop() {
  emit(Opcode::loop, {}, {});
  open_blocks_.push_back(Opcode::loop);
}

void ProgramBuilder::breakc_nz(Src cond) {
  check_scalar(cond, "breakc_nz");
  if (std::find(open_blocks_.begin(), open_blocks_.end(), Opcode::loop) == open_blocks_.end())
    misuse("breakc outside a loop");
  emit(Opcode::breakc, {}, {cond});
  code_.back().controls = kTestNonZero;
}

void ProgramBuilder::breakc_z(Src cond) {
  check_scalar(cond, "breakc_z");
  if (std::find(open_blocks_.begin(), open_blocks_.end(), Opcode::loop) == open_blocks_.end())
    misuse("breakc outside a loop");
  emit(Opcode::breakc, {}, {cond});
}

void ProgramBuilder::endloop() {
  if (open_blocks_.empty() || open_blocks_.back() != Opcode::loop) misuse("endloop without loop");
  open_blocks_.pop_back();
  emit(Opcode::endloop, {}, {});
}

void ProgramBuilder::ret() { emit(Opcode::ret, {}, {}); }

Program ProgramBuilder::finish() const {
  if (!open_blocks_.empty()) misuse("unclosed if or loop at the end of the program");
  if (!has_thread_group_) misuse("compute shader without dcl_thread_group");
  Program p;
  p.type = ProgramType::compute;
  p.major = major_;
  p.minor = minor_;
  auto& out = p.instructions;
  if (has_global_flags_) {
    Instruction ins;
    ins.opcode = Opcode::dcl_global_flags;
    ins.controls = global_flags_;
    out.push_back(ins);
  }
  out.insert(out.end(), cbs_.begin(), cbs_.end());
  out.insert(out.end(), resources_.begin(), resources_.end());
  out.insert(out.end(), uavs_.begin(), uavs_.end());
  out.insert(out.end(), inputs_.begin(), inputs_.end());
  if (temps_used_ > 0) {
    Instruction ins;
    ins.opcode = Opcode::dcl_temps;
    ins.trailing = {temps_used_};
    out.push_back(ins);
  }
  Instruction tg;
  tg.opcode = Opcode::dcl_thread_group;
  tg.trailing = {thread_group_[0], thread_group_[1], thread_group_[2]};
  out.push_back(tg);
  out.insert(out.end(), code_.begin(), code_.end());
  return p;
}

}  // namespace dmlbits::dxbc
