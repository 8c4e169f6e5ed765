// Tensors (dmlbits/tensor.hpp): 64-byte-aligned storage, sizes, views and element bit access.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "dmlbits/error.hpp"
#include "dmlbits/tensor.hpp"

namespace dmlbits {
namespace {

bool aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % kTensorAlignment == 0; }

TEST(TensorTest, AlignmentIs64) { EXPECT_EQ(kTensorAlignment, 64u); }

TEST(TensorTest, AlignedBufferIsAlignedForEverySize) {
  EXPECT_EQ(AlignedBuffer().data(), nullptr);
  EXPECT_EQ(AlignedBuffer().size(), 0u);
  std::vector<AlignedBuffer> keep;  // held at once, so the allocator cannot reuse one block
  for (std::size_t size : {0, 1, 2, 7, 63, 64, 65, 127, 128, 1000, 4096, 100000}) {
    AlignedBuffer b(size);
    ASSERT_NE(b.data(), nullptr) << size;
    EXPECT_TRUE(aligned(b.data())) << size;
    EXPECT_EQ(b.size(), size);
    if (size > 0) {
      std::memset(b.data(), 0xab, size);  // the whole size is writable (ASan would object)
      EXPECT_EQ(std::to_integer<int>(b.data()[size - 1]), 0xab);
    }
    keep.push_back(std::move(b));
  }
  // Even zero-size buffers are distinct pointers.
  EXPECT_NE(keep[0].data(), AlignedBuffer(0).data());
}

TEST(TensorTest, StorageIsAlignedForEveryDTypeAndShape) {
  const std::vector<Shape> shapes = {Shape{},     Shape{0},       Shape{1},
                                     Shape{3},    Shape{2, 3},    Shape{0, 3},
                                     Shape{2, 0}, Shape{7, 5, 3}, Shape{1, 1, 1, 1, 1, 1, 1, 9}};
  std::vector<Tensor> keep;
  for (const auto& row : dtype_table()) {
    for (const auto& shape : shapes) {
      Tensor t(row.dtype, shape);
      SCOPED_TRACE(std::string(row.numpy_name) + " " + shape.to_string());
      EXPECT_EQ(t.dtype(), row.dtype);
      EXPECT_EQ(t.shape(), shape);
      EXPECT_EQ(t.element_count(), shape.element_count());
      EXPECT_EQ(t.byte_size(), shape.element_count() * row.size);
      ASSERT_NE(t.data(), nullptr);
      EXPECT_TRUE(aligned(t.data()));
      EXPECT_TRUE(aligned(t.view().data));
      keep.push_back(std::move(t));
    }
  }
}

TEST(TensorTest, ZeroDimensionalHoldsOneElement) {
  Tensor t(DType::uint64, Shape{});
  EXPECT_EQ(t.element_count(), 1u);
  EXPECT_EQ(t.byte_size(), 8u);
  t.set_bits_at(0, 0x0123456789abcdefull);
  EXPECT_EQ(t.bits_at(0), 0x0123456789abcdefull);
}

TEST(TensorTest, DefaultTensorIsEmpty) {
  const Tensor t;
  EXPECT_EQ(t.byte_size(), 0u);
  EXPECT_EQ(t.data(), nullptr);
}

TEST(TensorTest, OversizedShapesAreRefusedBeforeAllocating) {
  for (const Shape& s : {Shape{4294967296, 4294967296}, Shape{std::uint64_t{1} << 61}, Shape{std::uint64_t{1} << 63}}) {
    try {
      Tensor t(DType::uint64, s);
      ADD_FAILURE() << "allocated " << s.to_string();
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::invalid_input) << e.what();
    }
  }
}

TEST(TensorTest, BitsAreZeroExtendedAndTruncatedToTheElementWidth) {
  for (const auto& row : dtype_table()) {
    Tensor t(row.dtype, Shape{3});
    const std::uint64_t mask = row.size == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * row.size)) - 1;
    t.set_bits_at(0, ~std::uint64_t{0});
    t.set_bits_at(1, 0x8000000000000080ull);
    t.set_bits_at(2, 0x0102030405060708ull);
    EXPECT_EQ(t.bits_at(0), mask) << row.numpy_name;  // all ones, never sign-extended
    EXPECT_EQ(t.bits_at(1), 0x8000000000000080ull & mask) << row.numpy_name;
    EXPECT_EQ(t.bits_at(2), 0x0102030405060708ull & mask) << row.numpy_name;
    // Neighbours are untouched: element 1 did not spill into 0 or 2.
    t.set_bits_at(1, 0);
    EXPECT_EQ(t.bits_at(0), mask);
    EXPECT_EQ(t.bits_at(2), 0x0102030405060708ull & mask);
  }
}

TEST(TensorTest, ElementsAreStoredLittleEndianAndPacked) {
  Tensor t(DType::uint32, Shape{2});
  t.set_bits_at(0, 0x04030201);
  t.set_bits_at(1, 0x08070605);
  const unsigned char want[] = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(std::memcmp(t.data(), want, 8), 0);

  std::byte buf[8]{};
  store_bits(buf, 2, 1, 0xbeef);
  EXPECT_EQ(std::to_integer<int>(buf[2]), 0xef);
  EXPECT_EQ(std::to_integer<int>(buf[3]), 0xbe);
  EXPECT_EQ(load_bits(buf, 2, 1), 0xbeefu);
  EXPECT_EQ(load_bits(buf, 1, 3), 0xbeu);
  EXPECT_EQ(load_bits(buf, 4, 0), 0xbeef0000u);
  store_bits(buf, 8, 0, 0x1122334455667788ull);
  EXPECT_EQ(load_bits(buf, 8, 0), 0x1122334455667788ull);
  EXPECT_EQ(load_bits(buf, 4, 1), 0x11223344u);
}

TEST(TensorTest, ViewsShareTheStorage) {
  Tensor t(DType::int16, Shape{2, 3});
  for (std::size_t i = 0; i < 6; ++i) t.set_bits_at(i, i);
  const TensorView v = t.view();
  EXPECT_EQ(v.dtype, DType::int16);
  EXPECT_EQ(v.shape, (Shape{2, 3}));
  EXPECT_EQ(v.data, t.data());
  EXPECT_EQ(v.element_count(), 6u);
  EXPECT_EQ(v.byte_size(), 12u);
  EXPECT_EQ(v.bytes().size(), 12u);
  EXPECT_EQ(v.bytes().data(), t.data());

  MutableTensorView m = t.mutable_view();
  EXPECT_EQ(m.data, t.data());
  EXPECT_EQ(m.byte_size(), 12u);
  store_bits(m.data, 2, 5, 0x7fff);
  EXPECT_EQ(t.bits_at(5), 0x7fffu);
  const TensorView mv = m;
  EXPECT_EQ(mv.data, t.data());
  EXPECT_EQ(mv.shape, m.shape);
  EXPECT_EQ(mv.dtype, m.dtype);
}

TEST(TensorTest, MovingKeepsTheStorage) {
  Tensor a(DType::uint8, Shape{100});
  const std::byte* p = a.data();
  a.set_bits_at(99, 42);
  Tensor b = std::move(a);
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(b.bits_at(99), 42u);
  EXPECT_EQ(b.byte_size(), 100u);
  Tensor c;
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_TRUE(aligned(c.data()));
}

}  // namespace
}  // namespace dmlbits
