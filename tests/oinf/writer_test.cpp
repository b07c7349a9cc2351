#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"

namespace oaaxvk::oinf {
namespace {

using testing::BuildSample;
using testing::Bytes;
using testing::ReadU64;

TEST(OinfWriter, LayoutMatchesTheDocumentedOffsets) {
  // Hand-computed in docs/oinf-format.md terms: header 72; sizevars B, D
  // (16 bytes each); metadata flag/mask/mode (32 each), scale/shape (40 each);
  // tensors W.0 (44), k (52), x (36), y (36) -> data at 448.
  const auto b = BuildSample();
  EXPECT_EQ(ReadU64(b, 29), 72u);
  EXPECT_EQ(ReadU64(b, 37), 104u);
  EXPECT_EQ(ReadU64(b, 45), 280u);
  EXPECT_EQ(ReadU64(b, 53), 448u);
  EXPECT_EQ(ReadU64(b, 61), 568u);
  EXPECT_EQ(b.size(), 568u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(b.data()), 5), std::string("OINF\0", 5));
  // First sizevar: u32 length 1, 'B', 3 zero bytes, then u64 5.
  EXPECT_EQ(b[72], 1);
  EXPECT_EQ(b[76], 'B');
  EXPECT_EQ(ReadU64(b, 80), 5u);
}

TEST(OinfWriter, IsDeterministicWhateverTheInsertionOrder) {
  const auto reference = BuildSample();
  struct Item {
    int kind;
    std::string name;
  };
  std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::mt19937 rng(42);
  for (int round = 0; round < 5; ++round) {
    std::shuffle(order.begin(), order.end(), rng);
    Writer w;
    for (int i : order) {
      switch (i) {
        case 0: w.AddSizeVar("D", 3); break;
        case 1: w.AddSizeVar("B", 5); break;
        case 2: w.AddMetadata("mode", MetadataValue::String("clamp_up")); break;
        case 3: w.AddMetadata("scale", MetadataValue::Scalar<float>(0.5f)); break;
        case 4: w.AddMetadata("flag", MetadataValue::Bool(true)); break;
        case 5:
          w.AddMetadata("mask", MetadataValue::Bitset({true, false, true, true, false, false, false, false, true, true, false}));
          break;
        case 6: w.AddMetadata("shape", MetadataValue::NdArray(ValueType::kI64, {3}, Bytes<int64_t>({1, -2, 3}))); break;
        case 7: w.AddTensor("W.0", ValueType::kF32, {3}, Bytes<float>({1.5f, -2.0f, 3.25f})); break;
        case 8: w.AddTensor("x", ValueType::kF32, {}, Bytes<float>({10.35f})); break;
        case 9: w.AddUninitializedTensor("y", ValueType::kI16, {}); break;
        case 10: w.AddTensor("k", ValueType::kU8, {2, 3}, Bytes<uint8_t>({1, 2, 3, 4, 5, 6})); break;
      }
    }
    auto bytes = w.Serialize();
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(*bytes, reference) << "round " << round;
  }
}

TEST(OinfWriter, RoundTripsEveryTensorType) {
  Writer w;
  w.AddTensor("i8", ValueType::kI8, {3}, Bytes<int8_t>({-128, 0, 127}));
  w.AddTensor("i16", ValueType::kI16, {2}, Bytes<int16_t>({-32768, 32767}));
  w.AddTensor("i32", ValueType::kI32, {1}, Bytes<int32_t>({-7}));
  w.AddTensor("i64", ValueType::kI64, {2}, Bytes<int64_t>({INT64_MIN, INT64_MAX}));
  w.AddTensor("u8", ValueType::kU8, {13}, std::vector<uint8_t>(13, 200));
  w.AddTensor("u16", ValueType::kU16, {1}, Bytes<uint16_t>({65535}));
  w.AddTensor("u32", ValueType::kU32, {1}, Bytes<uint32_t>({4000000000u}));
  w.AddTensor("u64", ValueType::kU64, {1}, Bytes<uint64_t>({UINT64_MAX}));
  w.AddTensor("f16", ValueType::kF16, {2}, Bytes<uint16_t>({0x3C00, 0xC000}));
  w.AddTensor("f32", ValueType::kF32, {1, 1, 1}, Bytes<float>({-0.0f}));
  w.AddTensor("f64", ValueType::kF64, {1}, Bytes<double>({1e300}));
  w.AddTensor("bool", ValueType::kBool, {3}, Bytes<uint8_t>({1, 0, 1}));
  w.AddTensor("empty", ValueType::kF32, {4, 0}, std::vector<uint8_t>{});
  w.AddTensor("scalar", ValueType::kI32, {}, Bytes<int32_t>({42}));
  w.AddUninitializedTensor("later", ValueType::kF16, {1, 3, 224, 224});
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto f = File::FromMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->tensors().size(), 15u);
  const Tensor* u64 = f->FindTensor("u64");
  uint64_t v;
  std::memcpy(&v, u64->data.data, 8);
  EXPECT_EQ(v, UINT64_MAX);
  EXPECT_EQ(f->FindTensor("empty")->numel, 0u);
  EXPECT_EQ(f->FindTensor("empty")->data.size, 0u);
  EXPECT_TRUE(f->FindTensor("empty")->has_data);
  EXPECT_EQ(f->FindTensor("later")->numel, 3u * 224 * 224);
  EXPECT_EQ(HalfToFloat(0xC000), -2.0f);
  for (const Tensor& t : f->tensors()) EXPECT_EQ(t.offset % 8, 0u) << t.name;
}

TEST(OinfWriter, RoundTripsEveryMetadataScalar) {
  Writer w;
  w.AddMetadata("a", MetadataValue::Scalar<int8_t>(-5));
  w.AddMetadata("b", MetadataValue::Scalar<int16_t>(-300));
  w.AddMetadata("c", MetadataValue::Scalar<int32_t>(-70000));
  w.AddMetadata("d", MetadataValue::Scalar<int64_t>(-5000000000ll));
  w.AddMetadata("e", MetadataValue::Scalar<uint8_t>(250));
  w.AddMetadata("f", MetadataValue::Scalar<uint16_t>(65000));
  w.AddMetadata("g", MetadataValue::Scalar<uint32_t>(4000000000u));
  w.AddMetadata("h", MetadataValue::Scalar<uint64_t>(1ull << 63));
  w.AddMetadata("i", MetadataValue::F16Bits(0x3555));
  w.AddMetadata("j", MetadataValue::Scalar<float>(1.25f));
  w.AddMetadata("k", MetadataValue::Scalar<double>(-2.5));
  w.AddMetadata("l", MetadataValue::Bool(false));
  w.AddMetadata("m", MetadataValue::Bitset({}));
  w.AddMetadata("n", MetadataValue::NdArray(ValueType::kBool, {2, 2}, Bytes<uint8_t>({1, 0, 0, 1})));
  w.AddMetadata("o", MetadataValue::NdArray(ValueType::kF64, {}, Bytes<double>({3.5})));
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto f = File::FromMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  int64_t d;
  ASSERT_TRUE(f->FindMetadata("d")->GetScalar(&d));
  EXPECT_EQ(d, -5000000000ll);
  uint64_t h;
  ASSERT_TRUE(f->FindMetadata("h")->GetScalar(&h));
  EXPECT_EQ(h, 1ull << 63);
  EXPECT_EQ(f->FindMetadata("i")->type, ValueType::kF16);
  EXPECT_EQ(f->FindMetadata("m")->bitset.bit_count, 0u);
  EXPECT_EQ(f->FindMetadata("n")->ndarray.numel, 4u);
  EXPECT_TRUE(f->FindMetadata("o")->ndarray.dims.empty());
  EXPECT_EQ(f->FindMetadata("o")->ndarray.numel, 1u);
}

TEST(OinfWriter, EmptyFileIsValid) {
  Writer w;
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(bytes->size(), 72u);
  EXPECT_TRUE(File::FromMemory(bytes->data(), bytes->size()).ok());
}

std::string Refusal(const Writer& w) {
  auto bytes = w.Serialize();
  EXPECT_FALSE(bytes.ok());
  return bytes.ok() ? "" : bytes.status().message();
}

TEST(OinfWriter, RefusesWhatTheReaderWouldRefuse) {
  {
    Writer w;
    w.AddTensor("/model/conv1/Conv_output_0", ValueType::kF32, {1}, Bytes<float>({1}));
    EXPECT_NE(Refusal(w).find("outside [A-Za-z0-9._-]"), std::string::npos);
  }
  {
    Writer w;
    w.AddSizeVar("", 1);
    EXPECT_NE(Refusal(w).find("sizevar name ''"), std::string::npos);
  }
  {
    Writer w;
    w.AddTensor("t", ValueType::kF32, {1}, Bytes<float>({1}));
    w.AddUninitializedTensor("t", ValueType::kF32, {1});
    EXPECT_EQ(Refusal(w), "duplicate tensor name 't'");
  }
  {
    Writer w;
    w.AddTensor("t", ValueType::kF32, {2, 3}, Bytes<float>({1, 2, 3}));
    EXPECT_NE(Refusal(w).find("12 data bytes given, numel 6 x sizeof(f32) needs 24"), std::string::npos);
  }
  {
    Writer w;
    w.AddTensor("t", ValueType::kBitset, {1}, Bytes<uint8_t>({1}));
    EXPECT_NE(Refusal(w).find("not a numeric/bool element type"), std::string::npos);
  }
  {
    Writer w;
    w.AddTensor("t", ValueType::kBool, {1}, Bytes<uint8_t>({2}));
    EXPECT_NE(Refusal(w).find("not 0 or 1"), std::string::npos);
  }
  {
    Writer w;
    w.AddMetadata("s", MetadataValue::String("has space"));
    EXPECT_NE(Refusal(w).find("metadata 's' STRING value"), std::string::npos);
  }
  {
    Writer w;
    w.AddMetadata("a", MetadataValue::NdArray(ValueType::kString, {1}, Bytes<uint8_t>({1})));
    EXPECT_NE(Refusal(w).find("NDARRAY element type"), std::string::npos);
  }
  {
    Writer w;
    w.AddMetadata("a", MetadataValue::NdArray(ValueType::kU16, {3}, Bytes<uint8_t>({1})));
    EXPECT_NE(Refusal(w).find("NDARRAY"), std::string::npos);
  }
  {
    Writer w;
    w.AddTensor("t", ValueType::kU8, {1ull << 32, 1ull << 32}, std::vector<uint8_t>{});
    EXPECT_NE(Refusal(w).find("overflows"), std::string::npos);
  }
}

TEST(OinfWriter, WriteFileThenOpen) {
  Writer w;
  w.AddTensor("t", ValueType::kI32, {2}, Bytes<int32_t>({7, 8}));
  const std::string path = ::testing::TempDir() + "/writer_file.oinf";
  ASSERT_TRUE(w.WriteFile(path).ok());
  auto f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->FindTensor("t")->numel, 2u);
  Status bad = w.WriteFile("/nonexistent-dir/x.oinf");
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("/nonexistent-dir/x.oinf"), std::string::npos);
}

}  // namespace
}  // namespace oaaxvk::oinf
