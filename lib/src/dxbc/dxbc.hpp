// A typed builder for Shader Model 5 compute shaders in the DXBC container, the encoding of its
// tokenized program (the SHEX chunk), the container checksum, and a listing printer that writes
// fxc's assembly syntax. Only what dmlbits' kernels need is here: raw buffers, constant buffers,
// the thread-ID inputs, integer instructions and structured control flow.
//
// Token layouts follow Microsoft's d3d11TokenizedProgramFormat.hpp; the tests check them
// against blobs compiled by fxc. Misuse of the builder (an empty write mask, an immediate as a
// destination, an unclosed `if`) throws Error{Errc::internal}: it is a bug in the kernel code.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace dmlbits::dxbc {

// ---------------------------------------------------------------------------------------------
// Token values (D3D10_SB_* / D3D11_SB_* in d3d11TokenizedProgramFormat.hpp)

enum class Opcode : std::uint16_t {
  and_ = 0x01,
  breakc = 0x03,
  else_ = 0x12,
  endif = 0x15,
  endloop = 0x16,
  iadd = 0x1e,
  if_ = 0x1f,
  ieq = 0x20,
  imul = 0x26,
  ine = 0x27,
  ishl = 0x29,
  loop = 0x30,
  mov = 0x36,
  movc = 0x37,
  not_ = 0x3b,
  or_ = 0x3c,
  ret = 0x3e,
  udiv = 0x4e,
  ult = 0x4f,
  uge = 0x50,
  ushr = 0x55,
  xor_ = 0x57,
  dcl_constant_buffer = 0x59,
  dcl_input = 0x5f,
  dcl_temps = 0x68,
  dcl_global_flags = 0x6a,
  countbits = 0x86,
  ubfe = 0x8a,
  bfi = 0x8c,
  dcl_thread_group = 0x9b,
  dcl_uav_raw = 0x9d,
  dcl_resource_raw = 0xa1,
  ld_raw = 0xa5,
  store_raw = 0xa6,
};

enum class OperandType : std::uint8_t {
  temp = 0,
  immediate32 = 4,
  resource = 7,         // t#
  constant_buffer = 8,  // cb#
  null = 13,
  uav = 30,              // u#
  thread_id = 32,        // vThreadID (SV_DispatchThreadID)
  thread_group_id = 33,  // vThreadGroupID
  thread_id_in_group = 34,
  thread_id_in_group_flattened = 36,  // vThreadIDInGroupFlattened (SV_GroupIndex)
};

enum class Selection : std::uint8_t { mask = 0, swizzle = 1, select1 = 2 };

// Components x, y, z, w are 0..3.
enum class Component : std::uint8_t { x = 0, y = 1, z = 2, w = 3 };

// A write mask: bit i set writes component i.
struct Mask {
  std::uint8_t bits = 0;
  constexpr unsigned count() const {
    return ((bits >> 0) & 1u) + ((bits >> 1) & 1u) + ((bits >> 2) & 1u) + ((bits >> 3) & 1u);
  }
  constexpr unsigned first() const {
    for (unsigned i = 0; i < 4; ++i)
      if (bits & (1u << i)) return i;
    return 0;
  }
  friend constexpr bool operator==(Mask, Mask) = default;
};
inline constexpr Mask kMaskX{1}, kMaskY{2}, kMaskZ{4}, kMaskW{8}, kMaskXY{3}, kMaskXYZ{7}, kMaskXYZW{15};
// The first n components: x, xy, xyz, xyzw.
Mask mask_first(unsigned n);

// Source component i reads component c[i].
struct Swizzle {
  std::array<std::uint8_t, 4> c{0, 1, 2, 3};
  friend constexpr bool operator==(const Swizzle&, const Swizzle&) = default;
};

// One operand exactly as it is encoded.
struct Operand {
  OperandType type = OperandType::temp;
  std::uint8_t components = 4;  // 0, 1 or 4
  Selection selection = Selection::mask;
  Mask mask{};        // selection == mask
  Swizzle swizzle{};  // selection == swizzle; select1 uses swizzle.c[0]
  std::uint8_t index_dims = 0;
  std::array<std::uint32_t, 3> index{};
  std::array<std::uint32_t, 4> imm{};  // immediate32: 1 or 4 values
};

// ---------------------------------------------------------------------------------------------
// Typed operands for the builder

// A destination: a temp's components, a UAV's components (store_raw) or null.
struct Dst {
  Operand op;
};
// A source: a temp's components, an immediate, cb#[i].c, an input component or a resource.
struct Src {
  Operand op;
};

// Components `mask` of temp register r<index>. As a destination it writes those components; as a
// source a single component is selected (r0.x), several keep their positions (r1.xy -> r1.xyxx).
struct Reg {
  std::uint32_t index = 0;
  Mask mask = kMaskX;
  constexpr Reg component(unsigned c) const { return Reg{index, Mask{static_cast<std::uint8_t>(1u << c)}}; }
  constexpr Reg x() const { return component(0); }
  constexpr Reg y() const { return component(1); }
  constexpr Reg z() const { return component(2); }
  constexpr Reg w() const { return component(3); }
  constexpr bool scalar() const { return mask.count() == 1; }
  operator Dst() const;
  operator Src() const;
};

Dst null_dst();
// l(v): a one-component 32-bit immediate.
Src imm(std::uint32_t v);
// l(a, b, c, d)
Src imm4(std::uint32_t a, std::uint32_t b, std::uint32_t c, std::uint32_t d);
// cb<slot>[vec4].<component>
Src cb(std::uint32_t slot, std::uint32_t vec4, unsigned component);
// vThreadID.<component> and friends (0-dimensional input registers).
Src input(OperandType type, unsigned component);

// A raw buffer binding: t<slot> (ByteAddressBuffer) or u<slot> (RWByteAddressBuffer).
struct RawBuffer {
  OperandType type = OperandType::resource;
  std::uint32_t slot = 0;
};
constexpr RawBuffer srv(std::uint32_t slot) { return {OperandType::resource, slot}; }
constexpr RawBuffer uav(std::uint32_t slot) { return {OperandType::uav, slot}; }

// ---------------------------------------------------------------------------------------------
// Instructions and programs

struct Instruction {
  Opcode opcode{};
  std::uint32_t controls = 0;           // opcode-specific bits 11..23 of the opcode token
  std::vector<std::uint32_t> extended;  // extended opcode tokens (bit 31 chains them)
  std::vector<Operand> operands;        // destinations first
  std::uint8_t dst_count = 0;
  std::vector<std::uint32_t> trailing;  // declaration words after the operands
};

inline constexpr std::uint32_t kTestNonZero = 1u << 18;         // if_nz, breakc_nz (else _z)
inline constexpr std::uint32_t kRefactoringAllowed = 1u << 11;  // dcl_globalFlags
inline constexpr std::uint32_t kDynamicIndexed = 1u << 11;      // dcl_constantbuffer

enum class ProgramType : std::uint16_t { pixel = 0, vertex = 1, geometry = 2, hull = 3, domain = 4, compute = 5 };

struct Program {
  ProgramType type = ProgramType::compute;
  unsigned major = 5, minor = 0;
  std::vector<Instruction> instructions;  // declarations first, as fxc orders them
};

// Builds a compute shader: declarations are collected and emitted in fxc's order (global flags,
// constant buffers, resources, UAVs, inputs, temps, thread group) ahead of the code; dcl_temps
// is counted from the registers the code uses.
class ProgramBuilder {
 public:
  ProgramBuilder(unsigned major = 5, unsigned minor = 0);

  // Declarations
  void dcl_global_flags(std::uint32_t flags);
  void dcl_constant_buffer(std::uint32_t slot, std::uint32_t vec4_count, bool dynamic_indexed = false);
  void dcl_resource_raw(std::uint32_t slot);
  void dcl_uav_raw(std::uint32_t slot);
  void dcl_input(OperandType type, Mask mask);
  void dcl_thread_group(std::uint32_t x, std::uint32_t y, std::uint32_t z);

  // Temporaries. scalar() hands out the next free component (r0.x, r0.y, ... r1.x),
  // vector(n) the first n components of a fresh register. A Scope gives its temps back when it
  // ends, so unrolled blocks reuse registers.
  Reg scalar();
  Reg vector(unsigned n);
  class Scope {
   public:
    explicit Scope(ProgramBuilder& b) : b_(b), saved_(b.next_component_) {}
    ~Scope() { b_.next_component_ = saved_; }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ProgramBuilder& b_;
    std::uint32_t saved_;
  };

  // Component-wise integer instructions (dst mask and source swizzles as in fxc).
  void mov(Dst d, Src a);
  void movc(Dst d, Src cond, Src if_true, Src if_false);
  void and_(Dst d, Src a, Src b);
  void or_(Dst d, Src a, Src b);
  void xor_(Dst d, Src a, Src b);
  void not_(Dst d, Src a);
  void iadd(Dst d, Src a, Src b);
  // The low 32 bits of a*b; the high half goes to null (vkd3d miscompiles it).
  void imul(Dst lo, Src a, Src b);
  // Quotient and remainder (either may be null_dst()).
  void udiv(Dst quotient, Dst remainder, Src a, Src b);
  void ishl(Dst d, Src a, Src count);
  void ushr(Dst d, Src a, Src count);
  void ieq(Dst d, Src a, Src b);
  void ine(Dst d, Src a, Src b);
  void ult(Dst d, Src a, Src b);
  void uge(Dst d, Src a, Src b);
  void countbits(Dst d, Src a);
  // ubfe d, width, offset, src: src's bits [offset, offset+width) at the bottom of d.
  void ubfe(Dst d, Src width, Src offset, Src a);
  // bfi d, width, offset, insert, base: base with bits [offset, offset+width) from insert.
  void bfi(Dst d, Src width, Src offset, Src insert, Src base);

  // Raw buffer access, byte addresses. ld_raw loads d.mask.count() consecutive words into the
  // components of d. ld_raw_indexable is the same load in the form fxc writes for cs_5_0, with
  // extended opcode tokens (resource dimension raw_buffer, return types mixed), which vkd3d 1.2
  // accepts but reports as "fixme" lines on stderr; the kernels use the plain form.
  void ld_raw(Reg d, Src byte_address, RawBuffer buffer);
  void ld_raw_indexable(Reg d, Src byte_address, RawBuffer buffer);
  // Stores value's components (1..4 consecutive words) at byte_address of u<slot>.
  void store_raw(RawBuffer buffer, Src byte_address, Reg value);

  // Structured control flow.
  void if_nz(Src cond);
  void if_z(Src cond);
  void else_();
  void endif();
  void loop();
  void breakc_nz(Src cond);
  void breakc_z(Src cond);
  void endloop();
  void ret();

  // The finished program; throws if control flow is still open.
  Program finish() const;

 private:
  void emit(Opcode op, std::initializer_list<Dst> dsts, std::initializer_list<Src> srcs);
  // emit() after checking every destination and source (named `ins` in the error): the
  // arithmetic instructions, whose operands are all ordinary registers or immediates.
  void emit_checked(Opcode op, const char* ins, std::initializer_list<Dst> dsts, std::initializer_list<Src> srcs);
  void note_temp(const Operand& o);

  unsigned major_, minor_;
  std::uint32_t global_flags_ = 0;
  bool has_global_flags_ = false;
  std::vector<Instruction> cbs_, resources_, uavs_, inputs_;
  std::array<std::uint32_t, 3> thread_group_{};
  bool has_thread_group_ = false;
  std::vector<Instruction> code_;
  std::vector<Opcode> open_blocks_;  // if_ / loop
  bool seen_else_ = false;
  std::uint32_t next_component_ = 0;  // allocator position, 4 per register
  std::uint32_t temps_used_ = 0;      // registers touched by the code
};

// ---------------------------------------------------------------------------------------------
// Encoding

std::uint32_t encode_operand_token(const Operand& o);
// Appends the operand token, its index words and immediate values.
void encode_operand(const Operand& o, std::vector<std::uint32_t>& out);
// One instruction's tokens (its length field included).
std::vector<std::uint32_t> encode_instruction(const Instruction& ins);
// The SHEX chunk body: version token, length token, instructions.
std::vector<std::uint32_t> encode_shex(const Program& p);

// The DXBC container of a compute shader: empty ISGN and OSGN chunks and the SHEX chunk, with
// its checksum.
std::vector<std::uint8_t> make_container(std::span<const std::uint32_t> shex);
std::vector<std::uint8_t> assemble(const Program& p);

// Plain MD5 (RFC 1321), the digest as 16 bytes.
std::array<std::uint8_t, 16> md5(std::span<const std::uint8_t> data);
// The DXBC checksum of a container (MD5 of bytes 20.. with the container's own final block), as
// the four words stored at byte offset 4.
std::array<std::uint32_t, 4> dxbc_checksum(std::span<const std::uint8_t> container);

// The program as fxc prints it ("cs_5_0", declarations, code indented in blocks).
std::string listing(const Program& p);
std::string operand_text(const Operand& o, bool hex_immediates = false);

}  // namespace dmlbits::dxbc
