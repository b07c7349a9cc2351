#include <gtest/gtest.h>

#include <set>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"

namespace oaaxvk::oinf {
namespace {

using testing::Bytes;

TEST(OinfNames, ValidNamesAreKeptAsIs) {
  EXPECT_EQ(MakeOinfName("W.0"), "W.0");
  EXPECT_EQ(MakeOinfName("conv1_weight-2"), "conv1_weight-2");
}

TEST(OinfNames, OtherNamesBecomeCharsetSafeAndDistinct) {
  const std::vector<std::string> names = {"/model/conv1/Conv_output_0", "input:0", "input_0", "input;0",
                                          "\xe7\x94\xbb\xe5\x83\x8f", "", "a b", "a\tb"};
  std::set<std::string> seen;
  for (const auto& n : names) {
    const std::string safe = MakeOinfName(n);
    EXPECT_TRUE(IsValidString(safe)) << safe;
    EXPECT_TRUE(seen.insert(safe).second) << "collision for " << n;
    EXPECT_EQ(MakeOinfName(n), safe) << "not deterministic";
  }
  EXPECT_EQ(MakeOinfName("input:0").substr(0, 8), "input_0-");
  EXPECT_EQ(MakeOinfName("input:0").size(), 8u + 16u);
}

TEST(OinfNames, Utf8Validation) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("abc"));
  EXPECT_TRUE(IsValidUtf8("\xc3\xa9"));               // é
  EXPECT_TRUE(IsValidUtf8("\xf0\x9f\x98\x80"));       // U+1F600
  EXPECT_FALSE(IsValidUtf8("\xc3"));                  // truncated
  EXPECT_FALSE(IsValidUtf8("\xc0\xaf"));              // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80"));          // surrogate
  EXPECT_FALSE(IsValidUtf8("\xf4\x90\x80\x80"));      // > U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xff"));
}

TEST(OinfNames, OriginalNamesRoundTripLosslessly) {
  const std::vector<std::string> names = {"/model/conv1/Conv_output_0", "input:0", "x",
                                          "\xe7\x94\xbb\xe5\x83\x8f/\xc3\xa9t\xc3\xa9", "with space"};
  Writer w;
  std::vector<std::string> stored;
  for (size_t i = 0; i < names.size(); ++i) {
    auto s = w.AddTensorWithUtf8Name(names[i], ValueType::kF32, {1}, Bytes<float>({static_cast<float>(i)}));
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    stored.push_back(*s);
  }
  EXPECT_EQ(stored[2], "x");
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto f = File::FromMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  for (size_t i = 0; i < names.size(); ++i) {
    ASSERT_NE(f->FindTensor(stored[i]), nullptr);
    auto original = f->OriginalName(stored[i]);
    ASSERT_TRUE(original.ok());
    EXPECT_EQ(*original, names[i]);
  }
  // Only names that needed it carry the extra metadata.
  EXPECT_EQ(f->FindMetadata("utf8name.x"), nullptr);
  EXPECT_NE(f->FindMetadata("utf8name." + stored[1]), nullptr);
}

TEST(OinfNames, RejectsInvalidUtf8Input) {
  Writer w;
  auto s = w.AddTensorWithUtf8Name("bad\xff", ValueType::kF32, {1}, Bytes<float>({1}));
  EXPECT_FALSE(s.ok());
}

TEST(OinfNames, OriginalNameRejectsMalformedRecords) {
  Writer w;
  w.AddTensor("t", ValueType::kF32, {1}, Bytes<float>({1}));
  w.AddMetadata("utf8name.t", MetadataValue::Scalar<uint32_t>(5));
  w.AddTensor("u", ValueType::kF32, {1}, Bytes<float>({1}));
  w.AddMetadata("utf8name.u", MetadataValue::NdArray(ValueType::kU8, {2}, Bytes<uint8_t>({0xc3, 0x28})));
  auto bytes = w.Serialize();
  ASSERT_TRUE(bytes.ok());
  auto f = File::FromMemory(bytes->data(), bytes->size());
  ASSERT_TRUE(f.ok());
  auto t = f->OriginalName("t");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("rank-1 u8 NDARRAY"), std::string::npos);
  auto u = f->OriginalName("u");
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("UTF-8"), std::string::npos);
}

}  // namespace
}  // namespace oaaxvk::oinf
