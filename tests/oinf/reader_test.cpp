#include <gtest/gtest.h>

#include <cctype>
#include <cstdio>
#include <fstream>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"

namespace oaaxvk::oinf {
namespace {

using testing::BuildSample;
using testing::Bytes;

std::string Reject(const std::vector<uint8_t>& bytes) {
  auto f = File::FromMemory(bytes.data(), bytes.size());
  EXPECT_FALSE(f.ok()) << "file was accepted";
  if (f.ok()) return "";
  EXPECT_EQ(f.status().code(), StatusCode::kDataLoss);
  return f.status().message();
}

TEST(OinfReader, ReadsEveryKindOfEntry) {
  const auto bytes = BuildSample();
  auto f = File::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_EQ(f->sizevars().size(), 2u);
  EXPECT_EQ(f->sizevars()[0].name, "B");
  EXPECT_EQ(f->FindSizeVar("D")->value, 3u);
  EXPECT_EQ(f->FindMetadata("mode")->string_value, "clamp_up");
  float scale = 0;
  EXPECT_TRUE(f->FindMetadata("scale")->GetScalar(&scale));
  EXPECT_EQ(scale, 0.5f);
  double wrong = 0;
  EXPECT_FALSE(f->FindMetadata("scale")->GetScalar(&wrong));
  EXPECT_EQ(f->FindMetadata("flag")->payload.data[0], 1);
  const BitsetView& mask = f->FindMetadata("mask")->bitset;
  ASSERT_EQ(mask.bit_count, 11u);
  EXPECT_TRUE(mask.Get(0));
  EXPECT_FALSE(mask.Get(1));
  EXPECT_TRUE(mask.Get(9));
  EXPECT_FALSE(mask.Get(10));
  const NdArrayView& shape = f->FindMetadata("shape")->ndarray;
  EXPECT_EQ(shape.element_type, ValueType::kI64);
  ASSERT_EQ(shape.dims, std::vector<uint64_t>{3});
  int64_t second;
  std::memcpy(&second, shape.data.data + 8, 8);
  EXPECT_EQ(second, -2);

  const Tensor* w = f->FindTensor("W.0");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->dtype, ValueType::kF32);
  EXPECT_EQ(w->numel, 3u);
  ASSERT_TRUE(w->has_data);
  float w2;
  std::memcpy(&w2, w->data.data + 8, 4);
  EXPECT_EQ(w2, 3.25f);
  const Tensor* x = f->FindTensor("x");
  EXPECT_TRUE(x->dims.empty());
  EXPECT_EQ(x->numel, 1u);
  const Tensor* y = f->FindTensor("y");
  EXPECT_FALSE(y->has_data);
  EXPECT_EQ(y->data.size, 0u);
  EXPECT_EQ(f->FindTensor("k")->dims, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(f->FindTensor("missing"), nullptr);
}

TEST(OinfReader, TensorDataIsZeroCopy) {
  const auto bytes = BuildSample();
  auto f = File::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(f.ok());
  const Tensor* k = f->FindTensor("k");
  EXPECT_GE(k->data.data, bytes.data());
  EXPECT_LT(k->data.data, bytes.data() + bytes.size());
  EXPECT_EQ(k->data.data, bytes.data() + k->offset);
  EXPECT_EQ(k->offset % 8, 0u);
}

TEST(OinfReader, OpensByPathWithMmap) {
  const auto bytes = BuildSample();
  const std::string path = ::testing::TempDir() + "/reader_open.oinf";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  auto f = File::Open(path);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->file_size(), bytes.size());
  File moved = std::move(f).value();
  EXPECT_EQ(moved.FindMetadata("mode")->string_value, "clamp_up");
  std::remove(path.c_str());
}

TEST(OinfReader, OpenReportsMissingFileAndDirectory) {
  auto missing = File::Open("/nonexistent/dir/model.oinf");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/model.oinf"), std::string::npos);
  auto dir = File::Open("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.status().message().find("not a regular file"), std::string::npos);
}

TEST(OinfReader, OpenNamesThePathOfACorruptFile) {
  auto bytes = BuildSample();
  bytes[0] = 'X';
  const std::string path = ::testing::TempDir() + "/corrupt.oinf";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  auto f = File::Open(path);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find(path), std::string::npos);
  EXPECT_NE(f.status().message().find("bad magic"), std::string::npos);
  std::remove(path.c_str());
}

TEST(OinfReader, EmptyFileIsAnErrorNotACrash) {
  auto f = File::FromMemory(nullptr, 0);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("too small"), std::string::npos);
}

TEST(OinfReader, RejectsEveryTruncation) {
  const auto bytes = BuildSample();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
    auto f = File::FromMemory(cut.data(), cut.size());
    ASSERT_FALSE(f.ok()) << "truncated to " << n << " bytes was accepted";
  }
}

TEST(OinfReader, DetectsBitFlipsInTheTables) {
  // Every byte of header + tables is either checked or padding. A single
  // flipped bit there may only survive where any value is legal: inside a
  // name (to another charset byte), a sizevar value, or a tensor dtype tag
  // (to another type of the same size, or any type for an uninitialized one).
  const auto bytes = BuildSample();
  auto base = File::FromMemory(bytes.data(), bytes.size());
  ASSERT_TRUE(base.ok());
  std::vector<bool> may_survive(bytes.size(), false);
  auto mark = [&](const void* p, size_t n) {
    const size_t at = static_cast<size_t>(static_cast<const uint8_t*>(p) - bytes.data());
    for (size_t i = 0; i < n; ++i) may_survive[at + i] = true;
  };
  for (const SizeVar& sv : base->sizevars()) {
    mark(sv.name.data(), sv.name.size());
    mark(sv.name.data() + ((4 + sv.name.size() + 7) & ~size_t{7}) - 4, 8);
  }
  for (const Metadata& m : base->metadata()) mark(m.key.data(), m.key.size());
  for (const Tensor& t : base->tensors()) {
    mark(t.name.data(), t.name.size());
    mark(t.name.data() + ((4 + t.name.size() + 7) & ~size_t{7}) - 4, 4);
  }
  const uint64_t off_d = testing::ReadU64(bytes, 53);
  int rejected = 0;
  for (size_t i = 0; i < off_d; ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      auto b = bytes;
      b[i] ^= static_cast<uint8_t>(1u << bit);
      if (File::FromMemory(b.data(), b.size()).ok()) {
        EXPECT_TRUE(may_survive[i]) << "flip of bit " << bit << " at byte " << i << " was accepted";
      } else {
        ++rejected;
      }
    }
  }
  EXPECT_GT(rejected, static_cast<int>(off_d * 8 * 3 / 4));
}

TEST(OinfReader, ErrorMessagesNameTheByteOffset) {
  auto b = BuildSample();
  testing::WriteU32(&b, 5, 2);
  EXPECT_EQ(Reject(b), "at byte 5: unsupported version 2 (this reader knows 1)");
}

TEST(OinfReader, RejectsNonZeroPadding) {
  auto b = BuildSample();
  b[70] = 1;  // header padding
  EXPECT_NE(Reject(b).find("non-zero padding byte 0x01 in header padding"), std::string::npos);
  b = BuildSample();
  b[b.size() - 1] = 7;  // padding after the last blob ('x' is 4 bytes padded to 8)
  EXPECT_NE(Reject(b).find("blob padding"), std::string::npos);
}

TEST(OinfReader, RejectsBoolTensorBytesOtherThanZeroOrOne) {
  Writer w;
  w.AddTensor("b", ValueType::kBool, {3}, Bytes<uint8_t>({0, 1, 1}));
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok());
  auto b = *bytes;
  const uint64_t off_d = testing::ReadU64(b, 53);
  b[off_d + 1] = 2;
  EXPECT_NE(Reject(b).find("BOOL byte 2"), std::string::npos);
}

TEST(OinfReader, HonoursRankLimit) {
  Writer w;
  w.AddTensor("t", ValueType::kU8, std::vector<uint64_t>(5, 1), Bytes<uint8_t>({9}));
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok());
  ReaderOptions opts;
  opts.max_rank = 4;
  auto f = File::FromMemory(bytes->data(), bytes->size(), opts);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("ndim 5 exceeds the limit of 4"), std::string::npos);
  EXPECT_TRUE(File::FromMemory(bytes->data(), bytes->size()).ok());
}

}  // namespace
}  // namespace oaaxvk::oinf
