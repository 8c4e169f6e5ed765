// The DXBC emitter: MD5 and the container checksum (against blobs compiled by Microsoft's fxc),
// operand and instruction encodings (against fxc's tokens), the container layout, builder misuse
// and the listing printer.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dxbc.hpp"
#include "dmlbits/error.hpp"

namespace dmlbits::dxbc {
namespace {

// Shader blobs compiled by fxc, copied from vkd3d's test suite: repository
// ValveSoftware/vkd3d (a mirror of Wine's vkd3d), file tests/d3d12.c at tag vkd3d-1.2, in the
// test functions named. Their checksums were computed by Microsoft's compiler; the sizes cover
// both final-block cases of the checksum (checksummed length mod 64 below 56, and 56 or more).
// test_create_compute_pipeline_state: [numthreads(1, 1, 1)] void main() {} (116 bytes; 96 checksummed bytes, 32 mod 64)
constexpr std::uint32_t kEmptyCs[] = {
    0x43425844, 0x1acc3ad0, 0x71c7b057, 0xc72c4306, 0xf432cb57, 0x00000001, 0x00000074, 0x00000003,
    0x0000002c, 0x0000003c, 0x0000004c, 0x4e475349, 0x00000008, 0x00000000, 0x00000008, 0x4e47534f,
    0x00000008, 0x00000000, 0x00000008, 0x58454853, 0x00000020, 0x00050050, 0x00000008, 0x0100086a,
    0x0400009b, 0x00000001, 0x00000001, 0x00000001, 0x0100003e,
};
// test_cs_constant_buffer: RWBuffer<float> store of a cbuffer value (232 bytes; 212 checksummed bytes, 20 mod 64)
constexpr std::uint32_t kConstantBufferCs[] = {
    0x43425844, 0xbcbca6fb, 0x0bd883e5, 0x8e0848ea, 0xaf152cfd, 0x00000001, 0x000000e8, 0x00000003, 0x0000002c,
    0x0000003c, 0x0000004c, 0x4e475349, 0x00000008, 0x00000000, 0x00000008, 0x4e47534f, 0x00000008, 0x00000000,
    0x00000008, 0x58454853, 0x00000094, 0x00050050, 0x00000025, 0x0100086a, 0x04000059, 0x00208e46, 0x00000007,
    0x00000001, 0x0400089c, 0x0011e000, 0x00000000, 0x00005555, 0x0200005f, 0x00024000, 0x0200005f, 0x00021012,
    0x02000068, 0x00000001, 0x0400009b, 0x00000020, 0x00000001, 0x00000001, 0x07000023, 0x00100012, 0x00000000,
    0x0002100a, 0x00004001, 0x00000020, 0x0002400a, 0x080000a4, 0x0011e0f2, 0x00000000, 0x00100006, 0x00000000,
    0x00208006, 0x00000007, 0x00000000, 0x0100003e,
};
// test_tgsm: RWByteAddressBuffer and groupshared InterlockedAdd (328 bytes; 308 checksummed bytes, 52 mod 64)
constexpr std::uint32_t kRawTgsmCs[] = {
    0x43425844, 0x467df6d9, 0x5f56edda, 0x5c96b787, 0x60c91fb8, 0x00000001, 0x00000148, 0x00000003, 0x0000002c,
    0x0000003c, 0x0000004c, 0x4e475349, 0x00000008, 0x00000000, 0x00000008, 0x4e47534f, 0x00000008, 0x00000000,
    0x00000008, 0x58454853, 0x000000f4, 0x00050050, 0x0000003d, 0x0100086a, 0x0300009d, 0x0011e000, 0x00000000,
    0x0200005f, 0x00024000, 0x0200005f, 0x00021012, 0x02000068, 0x00000001, 0x0400009f, 0x0011f000, 0x00000000,
    0x00000004, 0x0400009b, 0x00000020, 0x00000001, 0x00000001, 0x0200001f, 0x0002400a, 0x060000a6, 0x0011f012,
    0x00000000, 0x00004001, 0x00000000, 0x0002100a, 0x01000015, 0x010018be, 0x060000ad, 0x0011f000, 0x00000000,
    0x00004001, 0x00000000, 0x0002100a, 0x010018be, 0x0200001f, 0x0002400a, 0x06000029, 0x00100012, 0x00000000,
    0x0002100a, 0x00004001, 0x00000002, 0x070000a5, 0x00100022, 0x00000000, 0x00004001, 0x00000000, 0x0011f006,
    0x00000000, 0x070000a6, 0x0011e012, 0x00000000, 0x0010000a, 0x00000000, 0x0010001a, 0x00000000, 0x01000015,
    0x0100003e,
};
// test_compute_shader_instructions: RWByteAddressBuffer Load, InterlockedAdd, Store (332 bytes; 312 checksummed bytes,
// 56 mod 64)
constexpr std::uint32_t kInterlockedCs[] = {
    0x43425844, 0x85f9168a, 0x5fe0c4d5, 0x5989b572, 0xecb6ce3c, 0x00000001, 0x0000014c, 0x00000003, 0x0000002c,
    0x0000003c, 0x0000004c, 0x4e475349, 0x00000008, 0x00000000, 0x00000008, 0x4e47534f, 0x00000008, 0x00000000,
    0x00000008, 0x58454853, 0x000000f8, 0x00050050, 0x0000003e, 0x0100086a, 0x0300009d, 0x0011e000, 0x00000000,
    0x02000068, 0x00000001, 0x0400009f, 0x0011f000, 0x00000000, 0x00000004, 0x0400009b, 0x00000001, 0x00000001,
    0x00000001, 0x890000a5, 0x800002c2, 0x00199983, 0x00100012, 0x00000000, 0x00004001, 0x00000000, 0x0011e006,
    0x00000000, 0x070000a6, 0x0011f012, 0x00000000, 0x00004001, 0x00000000, 0x0010000a, 0x00000000, 0x070000ad,
    0x0011f000, 0x00000000, 0x00004001, 0x00000000, 0x00004001, 0xffffffff, 0x070000ad, 0x0011e000, 0x00000000,
    0x00004001, 0x00000004, 0x00004001, 0xffffffff, 0x010018be, 0x070000a5, 0x00100012, 0x00000000, 0x00004001,
    0x00000000, 0x0011f006, 0x00000000, 0x070000a6, 0x0011e012, 0x00000000, 0x00004001, 0x00000000, 0x0010000a,
    0x00000000, 0x0100003e,
};
// test_depth_load: u[id] = t[id] on Texture2D/RWTexture2D (272 bytes; 252 checksummed bytes, 60 mod 64)
constexpr std::uint32_t kDepthLoadCs[] = {
    0x43425844, 0x6ddce3d0, 0x24b47ad3, 0x7f6772d2, 0x6a644890, 0x00000001, 0x00000110, 0x00000003, 0x0000002c,
    0x0000003c, 0x0000004c, 0x4e475349, 0x00000008, 0x00000000, 0x00000008, 0x4e47534f, 0x00000008, 0x00000000,
    0x00000008, 0x58454853, 0x000000bc, 0x00050050, 0x0000002f, 0x0100086a, 0x04001858, 0x00107000, 0x00000000,
    0x00005555, 0x0400189c, 0x0011e000, 0x00000000, 0x00005555, 0x0200005f, 0x00021032, 0x02000068, 0x00000001,
    0x0400009b, 0x00000001, 0x00000001, 0x00000001, 0x04000036, 0x00100032, 0x00000000, 0x00021046, 0x08000036,
    0x001000c2, 0x00000000, 0x00004002, 0x00000000, 0x00000000, 0x00000000, 0x00000000, 0x8900002d, 0x800000c2,
    0x00155543, 0x00100012, 0x00000000, 0x00100e46, 0x00000000, 0x00107e46, 0x00000000, 0x060000a4, 0x0011e0f2,
    0x00000000, 0x00021546, 0x00100006, 0x00000000, 0x0100003e,
};
// test_descriptor_tables_overlapping_bindings: ByteAddressBuffer copy loops (572 bytes; 552 checksummed bytes, 40 mod
// 64)
constexpr std::uint32_t kOverlappingBindingsCs[] = {
    0x43425844, 0x8d2646b7, 0xeb60d9ee, 0x33ccd6ed, 0x5557e649, 0x00000001, 0x0000023c, 0x00000003, 0x0000002c,
    0x0000003c, 0x0000004c, 0x4e475349, 0x00000008, 0x00000000, 0x00000008, 0x4e47534f, 0x00000008, 0x00000000,
    0x00000008, 0x58454853, 0x000001e8, 0x00050050, 0x0000007a, 0x0100086a, 0x04000059, 0x00208e46, 0x00000000,
    0x00000001, 0x030000a1, 0x00107000, 0x00000000, 0x030000a1, 0x00107000, 0x00000004, 0x0300009d, 0x0011e000,
    0x00000000, 0x0300009d, 0x0011e000, 0x00000002, 0x02000068, 0x00000001, 0x0400009b, 0x00000001, 0x00000001,
    0x00000001, 0x05000036, 0x00100012, 0x00000000, 0x00004001, 0x00000000, 0x01000030, 0x08000050, 0x00100022,
    0x00000000, 0x0010000a, 0x00000000, 0x0020800a, 0x00000000, 0x00000000, 0x03040003, 0x0010001a, 0x00000000,
    0x07000029, 0x00100022, 0x00000000, 0x0010000a, 0x00000000, 0x00004001, 0x00000002, 0x890000a5, 0x800002c2,
    0x00199983, 0x00100042, 0x00000000, 0x0010001a, 0x00000000, 0x00107006, 0x00000000, 0x070000a6, 0x0011e012,
    0x00000000, 0x0010001a, 0x00000000, 0x0010002a, 0x00000000, 0x0700001e, 0x00100012, 0x00000000, 0x0010000a,
    0x00000000, 0x00004001, 0x00000001, 0x01000016, 0x05000036, 0x00100012, 0x00000000, 0x00004001, 0x00000000,
    0x01000030, 0x08000050, 0x00100022, 0x00000000, 0x0010000a, 0x00000000, 0x0020801a, 0x00000000, 0x00000000,
    0x03040003, 0x0010001a, 0x00000000, 0x07000029, 0x00100022, 0x00000000, 0x0010000a, 0x00000000, 0x00004001,
    0x00000002, 0x890000a5, 0x800002c2, 0x00199983, 0x00100042, 0x00000000, 0x0010001a, 0x00000000, 0x00107006,
    0x00000004, 0x070000a6, 0x0011e012, 0x00000002, 0x0010001a, 0x00000000, 0x0010002a, 0x00000000, 0x0700001e,
    0x00100012, 0x00000000, 0x0010000a, 0x00000000, 0x00004001, 0x00000001, 0x01000016, 0x0100003e,
};

std::vector<std::uint8_t> bytes_of(std::span<const std::uint32_t> words) {
  std::vector<std::uint8_t> b(words.size() * 4);
  std::memcpy(b.data(), words.data(), b.size());  // the test hosts are little-endian, as DXBC is
  return b;
}

std::string hex(std::span<const std::uint8_t> d) {
  std::string s;
  char buf[3];
  for (auto c : d) {
    std::snprintf(buf, sizeof buf, "%02x", c);
    s += buf;
  }
  return s;
}

std::span<const std::uint8_t> text(const char* s) { return {reinterpret_cast<const std::uint8_t*>(s), std::strlen(s)}; }

TEST(DxbcTest, Md5MatchesRfc1321Vectors) {
  EXPECT_EQ(hex(md5(text(""))), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(hex(md5(text("abc"))), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(hex(md5(text("message digest"))), "f96b697d7cb7938d525a2f31aaf161d0");
  // 62 bytes: the padding needs a second block.
  EXPECT_EQ(hex(md5(text("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"))),
            "d174ab98d277d9f5a5611c2c9f419d9f");
  // 80 bytes: one whole block, then 16 bytes.
  EXPECT_EQ(hex(md5(text("12345678901234567890123456789012345678901234567890123456789012345678901234567890"))),
            "57edf4a22be3c955ac49da2e2107b67a");
}

struct Blob {
  const char* name;
  std::span<const std::uint32_t> words;
};

const Blob kBlobs[] = {
    {"kEmptyCs", kEmptyCs},         {"kConstantBufferCs", kConstantBufferCs},
    {"kRawTgsmCs", kRawTgsmCs},     {"kInterlockedCs", kInterlockedCs},
    {"kDepthLoadCs", kDepthLoadCs}, {"kOverlappingBindingsCs", kOverlappingBindingsCs},
};

TEST(DxbcTest, ChecksumMatchesFxcBlobs) {
  bool short_tail = false, long_tail = false;
  for (const Blob& blob : kBlobs) {
    SCOPED_TRACE(blob.name);
    const auto bytes = bytes_of(blob.words);
    ASSERT_EQ(blob.words[6], bytes.size());
    const auto sum = dxbc_checksum(bytes);
    EXPECT_EQ(sum[0], blob.words[1]);
    EXPECT_EQ(sum[1], blob.words[2]);
    EXPECT_EQ(sum[2], blob.words[3]);
    EXPECT_EQ(sum[3], blob.words[4]);
    const std::size_t tail = (bytes.size() - 20) % 64;
    (tail < 56 ? short_tail : long_tail) = true;
  }
  EXPECT_TRUE(short_tail);
  EXPECT_TRUE(long_tail);
}

TEST(DxbcTest, ChecksumChangesWithAnyCoveredByte) {
  auto bytes = bytes_of(kInterlockedCs);
  const auto before = dxbc_checksum(bytes);
  bytes[20] ^= 1;  // the first covered byte (container version)
  EXPECT_NE(dxbc_checksum(bytes), before);
  bytes[20] ^= 1;
  bytes.back() ^= 0x80;  // the last
  EXPECT_NE(dxbc_checksum(bytes), before);
  bytes.back() ^= 0x80;
  bytes[4] ^= 0xff;  // the checksum itself is not covered
  EXPECT_EQ(dxbc_checksum(bytes), before);
}

// Operand tokens as fxc writes them (the words appear in the blobs above).
TEST(DxbcTest, OperandTokensMatchFxc) {
  const Reg r0{0, kMaskX};
  EXPECT_EQ(encode_operand_token(Dst(r0).op), 0x00100012u);                                 // r0.x (destination)
  EXPECT_EQ(encode_operand_token(Src(r0).op), 0x0010000au);                                 // r0.x (source)
  EXPECT_EQ(encode_operand_token(Src(r0.y()).op), 0x0010001au);                             // r0.y
  EXPECT_EQ(encode_operand_token(Src(r0.z()).op), 0x0010002au);                             // r0.z
  EXPECT_EQ(encode_operand_token(Dst(Reg{1, kMaskXY}).op), 0x00100032u);                    // r1.xy
  EXPECT_EQ(encode_operand_token(Src(Reg{1, kMaskXY}).op), 0x00100046u);                    // r1.xyxx
  EXPECT_EQ(encode_operand_token(Src(Reg{3, kMaskXYZW}).op), 0x00100e46u);                  // r3.xyzw
  EXPECT_EQ(encode_operand_token(imm(2).op), 0x00004001u);                                  // l(2)
  EXPECT_EQ(encode_operand_token(imm4(1, 1, 0, 0).op), 0x00004002u);                        // l(1, 1, 0, 0)
  EXPECT_EQ(encode_operand_token(cb(0, 0, 0).op), 0x0020800au);                             // cb0[0].x
  EXPECT_EQ(encode_operand_token(cb(0, 0, 1).op), 0x0020801au);                             // cb0[0].y
  EXPECT_EQ(encode_operand_token(null_dst().op), 0x0000d000u);                              // null
  EXPECT_EQ(encode_operand_token(input(OperandType::thread_group_id, 0).op), 0x0002100au);  // vThreadGroupID.x
  EXPECT_EQ(encode_operand_token(input(OperandType::thread_id_in_group_flattened, 0).op), 0x0002400au);
}

// The code tokens of a program: its SHEX without the version and length tokens and without
// the declarations (dcl_temps 0x68, dcl_thread_group 0x9b) the builder adds.
std::vector<std::uint32_t> code_of(const ProgramBuilder& b) {
  const auto shex = encode_shex(b.finish());
  std::vector<std::uint32_t> code;
  for (std::size_t p = 2; p < shex.size();) {
    const std::uint32_t len = (shex[p] >> 24) & 0x7f;
    const std::uint32_t op = shex[p] & 0x7ff;
    if (len == 0) break;
    if (op != 0x68 && op != 0x9b) code.insert(code.end(), shex.begin() + p, shex.begin() + p + len);
    p += len;
  }
  return code;
}

ProgramBuilder bare() {
  ProgramBuilder b;
  b.dcl_thread_group(1, 1, 1);
  return b;
}

TEST(DxbcTest, InstructionTokensMatchFxc) {
  {
    // imul null, r0.y, r0.x, r0.y (vkd3d's test_cs_group_index... blob, cs_group_index_code)
    ProgramBuilder b = bare();
    b.imul(Reg{0, kMaskY}, Reg{0, kMaskX}, Reg{0, kMaskY});
    EXPECT_EQ(code_of(b),
              (std::vector<std::uint32_t>{0x08000026, 0x0000d000, 0x00100022, 0, 0x0010000a, 0, 0x0010001a, 0}));
  }
  {
    // udiv r2.x, r3.x, r1.x, r0.x (same blob)
    ProgramBuilder b = bare();
    b.udiv(Reg{2, kMaskX}, Reg{3, kMaskX}, Reg{1, kMaskX}, Reg{0, kMaskX});
    EXPECT_EQ(code_of(b),
              (std::vector<std::uint32_t>{0x0900004e, 0x00100012, 2, 0x00100012, 3, 0x0010000a, 1, 0x0010000a, 0}));
  }
  {
    // iadd r1.xy, r1.xyxx, l(1, 1, 0, 0) (same blob)
    ProgramBuilder b = bare();
    b.iadd(Reg{1, kMaskXY}, Reg{1, kMaskXY}, imm4(1, 1, 0, 0));
    EXPECT_EQ(code_of(b),
              (std::vector<std::uint32_t>{0x0a00001e, 0x00100032, 1, 0x00100046, 1, 0x00004002, 1, 1, 0, 0}));
  }
  {
    // ishl r0.x, vThreadGroupID.x, l(2); store_raw u0.x, r0.x, r0.y (kRawTgsmCs)
    ProgramBuilder b = bare();
    b.ishl(Reg{0, kMaskX}, input(OperandType::thread_group_id, 0), imm(2));
    b.store_raw(uav(0), Reg{0, kMaskX}, Reg{0, kMaskY});
    EXPECT_EQ(code_of(b), (std::vector<std::uint32_t>{0x06000029, 0x00100012, 0, 0x0002100a, 0x00004001, 2, 0x070000a6,
                                                      0x0011e012, 0, 0x0010000a, 0, 0x0010001a, 0}));
  }
  {
    // if_z vThreadIDInGroupFlattened.x ... endif (kRawTgsmCs); if_nz sets bit 18.
    ProgramBuilder b = bare();
    b.if_z(input(OperandType::thread_id_in_group_flattened, 0));
    b.endif();
    b.if_nz(Reg{0, kMaskX});
    b.endif();
    EXPECT_EQ(code_of(b),
              (std::vector<std::uint32_t>{0x0200001f, 0x0002400a, 0x01000015, 0x0304001f, 0x0010000a, 0, 0x01000015}));
  }
  {
    // ld_raw r0.xy, r1.x, t2.xyxx: plain form, resource swizzle from the write mask.
    ProgramBuilder b = bare();
    b.ld_raw(Reg{0, kMaskXY}, Reg{1, kMaskX}, srv(2));
    b.ld_raw(Reg{0, Mask{6}}, Reg{1, kMaskX}, srv(2));     // r0.yz <- words 0, 1: t2.xxyx
    b.store_raw(uav(1), Reg{1, kMaskX}, Reg{0, Mask{6}});  // u1.xy <- r0.yzyy
    EXPECT_EQ(code_of(b), (std::vector<std::uint32_t>{0x070000a5, 0x00100032, 0, 0x0010000a, 1, 0x00107046, 2,  //
                                                      0x070000a5, 0x00100062, 0, 0x0010000a, 1, 0x00107106, 2,  //
                                                      0x070000a6, 0x0011e032, 1, 0x0010000a, 1, 0x00100596, 0}));
  }
}

TEST(DxbcTest, InstructionLengthFieldCountsEveryWord) {
  ProgramBuilder b = bare();
  b.bfi(Reg{0, kMaskX}, imm(8), imm(24), Reg{0, kMaskY}, Reg{0, kMaskX});
  b.movc(Reg{0, kMaskX}, Reg{0, kMaskZ}, imm(0), cb(0, 6, 3));
  b.ret();
  const auto code = code_of(b);
  // bfi: opcode + dst (2) + l (2) + l (2) + src (2) + src (2) = 11 words.
  ASSERT_EQ(code.size(), 11u + 10u + 1u);
  EXPECT_EQ(code[0], 0x0b00008cu);
  // movc: opcode + dst (2) + src (2) + l (2) + cb0[6].w (3) = 10 words.
  EXPECT_EQ(code[11], 0x0a000037u);
  EXPECT_EQ(code[11 + 7], 0x0020803au);
  EXPECT_EQ(code[11 + 8], 0u);
  EXPECT_EQ(code[11 + 9], 6u);
  EXPECT_EQ(code[21], 0x0100003eu);
}

TEST(DxbcTest, EmptyComputeShaderIsByteIdenticalToFxc) {
  ProgramBuilder b;
  b.dcl_global_flags(kRefactoringAllowed);
  b.dcl_thread_group(1, 1, 1);
  b.ret();
  EXPECT_EQ(assemble(b.finish()), bytes_of(kEmptyCs));
}

// The program of kOverlappingBindingsCs, instruction for instruction:
//   for (i = 0; i < size; ++i) u0.Store(4 * i, t0.Load(4 * i));
//   for (i = 0; i < size2; ++i) u2.Store(4 * i, t4.Load(4 * i));
Program overlapping_bindings_program() {
  ProgramBuilder b;
  b.dcl_global_flags(kRefactoringAllowed);
  b.dcl_constant_buffer(0, 1);
  b.dcl_resource_raw(0);
  b.dcl_resource_raw(4);
  b.dcl_uav_raw(0);
  b.dcl_uav_raw(2);
  b.dcl_thread_group(1, 1, 1);
  const Reg i = Reg{0, kMaskX}, t = Reg{0, kMaskY}, v = Reg{0, kMaskZ};
  const std::pair<unsigned, unsigned> copies[] = {{0, 0}, {4, 2}};
  for (unsigned n = 0; n < 2; ++n) {
    b.mov(i, imm(0));
    b.loop();
    b.uge(t, i, cb(0, 0, n));
    b.breakc_nz(t);
    b.ishl(t, i, imm(2));
    b.ld_raw_indexable(v, t, srv(copies[n].first));
    b.store_raw(uav(copies[n].second), t, v);
    b.iadd(i, i, imm(1));
    b.endloop();
  }
  b.ret();
  return b.finish();
}

TEST(DxbcTest, LoopProgramIsByteIdenticalToFxc) {
  EXPECT_EQ(assemble(overlapping_bindings_program()), bytes_of(kOverlappingBindingsCs));
}

TEST(DxbcTest, ContainerHeaderParsesBack) {
  ProgramBuilder b;
  b.dcl_global_flags(kRefactoringAllowed);
  b.dcl_constant_buffer(0, 7);
  b.dcl_resource_raw(0);
  b.dcl_uav_raw(0);
  b.dcl_input(OperandType::thread_id, kMaskXY);
  b.dcl_thread_group(64, 1, 1);
  const Reg r = b.scalar();
  b.ishl(r, input(OperandType::thread_id, 0), imm(2));
  const Reg v = b.scalar();
  b.ld_raw(v, r, srv(0));
  b.not_(v, v);
  b.store_raw(uav(0), r, v);
  b.ret();
  const auto shex = encode_shex(b.finish());
  const auto c = make_container(shex);

  auto word = [&](std::size_t offset) {
    std::uint32_t w;
    std::memcpy(&w, c.data() + offset, 4);
    return w;
  };
  ASSERT_GE(c.size(), 80u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(c.data()), 4), "DXBC");
  const auto sum = dxbc_checksum(c);
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(word(4 + 4 * i), sum[i]);
  EXPECT_EQ(word(20), 1u);        // version
  EXPECT_EQ(word(24), c.size());  // total size
  ASSERT_EQ(word(28), 3u);        // chunks
  const char* tags[] = {"ISGN", "OSGN", "SHEX"};
  std::size_t expected_offset = 44;
  for (unsigned i = 0; i < 3; ++i) {
    const std::size_t at = word(32 + 4 * i);
    EXPECT_EQ(at, expected_offset);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(c.data() + at), 4), tags[i]);
    const std::uint32_t size = word(at + 4);
    if (i < 2) {
      EXPECT_EQ(size, 8u);
      EXPECT_EQ(word(at + 8), 0u);  // no elements
      EXPECT_EQ(word(at + 12), 8u);
    } else {
      EXPECT_EQ(size, shex.size() * 4);
      EXPECT_EQ(at + 8 + size, c.size());
      EXPECT_EQ(word(at + 8), 0x00050050u);  // cs_5_0
      EXPECT_EQ(word(at + 12), shex.size());
      // Walking the instructions by their length fields lands exactly on the end.
      std::size_t p = 2;
      std::vector<std::uint32_t> opcodes;
      while (p < shex.size()) {
        const std::uint32_t len = (shex[p] >> 24) & 0x7f;
        ASSERT_GT(len, 0u);
        opcodes.push_back(shex[p] & 0x7ff);
        p += len;
      }
      EXPECT_EQ(p, shex.size());
      EXPECT_EQ(opcodes,
                (std::vector<std::uint32_t>{0x6a, 0x59, 0xa1, 0x9d, 0x5f, 0x68, 0x9b, 0x29, 0xa5, 0x3b, 0xa6, 0x3e}));
    }
    expected_offset = at + 8 + size;
  }
}

template <class F>
void expect_internal_error(F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::internal) << e.what();
  }
}

TEST(DxbcTest, BuilderMisuseIsAnInternalError) {
  expect_internal_error([] { bare().endif(); });
  expect_internal_error([] { bare().else_(); });
  expect_internal_error([] { bare().endloop(); });
  expect_internal_error([] { bare().breakc_nz(imm(1)); });
  expect_internal_error([] {
    ProgramBuilder b = bare();
    b.if_nz(Reg{0, kMaskX});
    (void)b.finish();  // unclosed if
  });
  expect_internal_error([] {
    ProgramBuilder b = bare();
    b.loop();
    b.endif();  // closes the wrong block
  });
  expect_internal_error([] { bare().mov(Reg{0, Mask{0}}, imm(1)); });               // empty write mask
  expect_internal_error([] { bare().if_nz(Reg{0, kMaskXY}); });                     // vector condition
  expect_internal_error([] { bare().store_raw(srv(0), imm(0), Reg{0, kMaskX}); });  // read-only buffer
  expect_internal_error([] { bare().imul(null_dst(), imm(1), imm(2)); });           // no low destination
  expect_internal_error([] { ProgramBuilder().finish(); });                         // no dcl_thread_group
  expect_internal_error([] { bare().dcl_thread_group(1025, 1, 1); });
  expect_internal_error([] { ProgramBuilder(4, 0); });
  expect_internal_error([] { ProgramBuilder(5, 1); });  // 5.1 declarations are not implemented
  expect_internal_error([] { (void)mask_first(5); });
}

TEST(DxbcTest, BuilderAllocatesAndReusesTemps) {
  ProgramBuilder b = bare();
  const Reg a = b.scalar();
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(a.mask, kMaskX);
  EXPECT_EQ(b.scalar().mask, kMaskY);
  {
    ProgramBuilder::Scope s(b);
    const Reg v = b.vector(2);  // a fresh register
    EXPECT_EQ(v.index, 1u);
    EXPECT_EQ(v.mask, kMaskXY);
    EXPECT_EQ(b.scalar().index, 2u);
  }
  const Reg c = b.scalar();  // the scope's registers are free again
  EXPECT_EQ(c.index, 0u);
  EXPECT_EQ(c.mask, kMaskZ);
  b.mov(Reg{4, kMaskW}, imm(0));
  const auto p = b.finish();
  // dcl_temps counts the registers the code uses.
  bool found = false;
  for (const auto& ins : p.instructions)
    if (ins.opcode == Opcode::dcl_temps) {
      found = true;
      EXPECT_EQ(ins.trailing, std::vector<std::uint32_t>{5});
    }
  EXPECT_TRUE(found);
}

TEST(DxbcTest, ListingUsesFxcSyntax) {
  EXPECT_EQ(listing(overlapping_bindings_program()),
            "cs_5_0\n"
            "dcl_globalFlags refactoringAllowed\n"
            "dcl_constantbuffer CB0[1], immediateIndexed\n"
            "dcl_resource_raw t0\n"
            "dcl_resource_raw t4\n"
            "dcl_uav_raw u0\n"
            "dcl_uav_raw u2\n"
            "dcl_temps 1\n"
            "dcl_thread_group 1, 1, 1\n"
            "mov r0.x, l(0)\n"
            "loop \n"
            "  uge r0.y, r0.x, cb0[0].x\n"
            "  breakc_nz r0.y\n"
            "  ishl r0.y, r0.x, l(2)\n"
            "  ld_raw_indexable(raw_buffer)(mixed,mixed,mixed,mixed) r0.z, r0.y, t0.xxxx\n"
            "  store_raw u0.x, r0.y, r0.z\n"
            "  iadd r0.x, r0.x, l(1)\n"
            "endloop \n"
            "mov r0.x, l(0)\n"
            "loop \n"
            "  uge r0.y, r0.x, cb0[0].y\n"
            "  breakc_nz r0.y\n"
            "  ishl r0.y, r0.x, l(2)\n"
            "  ld_raw_indexable(raw_buffer)(mixed,mixed,mixed,mixed) r0.z, r0.y, t4.xxxx\n"
            "  store_raw u2.x, r0.y, r0.z\n"
            "  iadd r0.x, r0.x, l(1)\n"
            "endloop \n"
            "ret \n");
}

TEST(DxbcTest, ListingPrintsBitwiseImmediatesInHex) {
  ProgramBuilder b = bare();
  b.and_(Reg{0, kMaskX}, Reg{1, kMaskX}, imm(255));
  b.movc(Reg{0, kMaskX}, Reg{0, kMaskY}, imm(0xffffffffu), imm(7));
  b.if_nz(Reg{0, kMaskX});
  b.ubfe(Reg{0, kMaskX}, imm(8), imm(16), Reg{1, kMaskX});
  b.else_();
  b.imul(Reg{0, kMaskX}, input(OperandType::thread_id, 1), cb(0, 0, 1));
  b.endif();
  EXPECT_EQ(listing(b.finish()),
            "cs_5_0\n"
            "dcl_temps 2\n"
            "dcl_thread_group 1, 1, 1\n"
            "and r0.x, r1.x, l(0x000000ff)\n"
            "movc r0.x, r0.y, l(-1), l(7)\n"
            "if_nz r0.x\n"
            "  ubfe r0.x, l(8), l(16), r1.x\n"
            "else \n"
            "  imul null, r0.x, vThreadID.y, cb0[0].y\n"
            "endif \n");
}

}  // namespace
}  // namespace dmlbits::dxbc
