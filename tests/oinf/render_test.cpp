#include <gtest/gtest.h>

#include <cmath>

#include "oaax_vulkan/oinf.h"
#include "test_util.h"

namespace oaaxvk::oinf {
namespace {

using testing::Bytes;

std::string Render(const Writer& w) {
  auto bytes = w.Serialize();
  EXPECT_TRUE(bytes.ok());
  auto f = File::FromMemory(bytes->data(), bytes->size());
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return RenderText(*f);
}

TEST(OinfRender, PrintsSizeVarsMetadataAndTensors) {
  Writer w;
  w.AddSizeVar("D", 3);
  w.AddMetadata("mode", MetadataValue::String("clamp_up"));
  w.AddMetadata("mask", MetadataValue::Bitset({true, false, true}));
  w.AddMetadata("flag", MetadataValue::Bool(true));
  w.AddMetadata("dims", MetadataValue::NdArray(ValueType::kI64, {2}, Bytes<int64_t>({-1, 7})));
  w.AddTensor("x", ValueType::kF32, {}, Bytes<float>({10.35f}));
  w.AddUninitializedTensor("y", ValueType::kI16, {});
  w.AddUninitializedTensor("z", ValueType::kF16, {2, 3});
  w.AddTensor("v", ValueType::kU8, {10}, Bytes<uint8_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  const std::string expected =
      "D := 3\n"
      "\n"
      "dims: ndarray<i64>[2] = { -1, 7 }\n"
      "flag: bool = true\n"
      "mask: bitset[3] = 101\n"
      "mode: str = \"clamp_up\"\n"
      "\n"
      "v: u8[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 }\n"
      "- [nbytes: 10, min: 0, max: 9, mean: 4.5, median: 4.5, std: 2.87228]\n"
      "- hist:\n"
      "    [0,0.9):1\n"
      "    [0.9,1.8):1\n"
      "    [1.8,2.7):1\n"
      "    [2.7,3.6):1\n"
      "    [3.6,4.5):1\n"
      "    [4.5,5.4):1\n"
      "    [5.4,6.3):1\n"
      "    [6.3,7.2):1\n"
      "    [7.2,8.1):1\n"
      "    [8.1,9]:1\n"
      "\n"
      "x: f32 = 10.35\n"
      "\n"
      "y: i16[] -- uninitialized\n"
      "\n"
      "z: f16[2, 3] -- uninitialized\n"
      "\n";
  EXPECT_EQ(Render(w), expected);
}

TEST(OinfRender, PreviewsFirstAndLastFive) {
  Writer w;
  std::vector<int32_t> v(13);
  for (int i = 0; i < 13; ++i) v[i] = i * 10;
  w.AddTensor("t", ValueType::kI32, {13}, Bytes<int32_t>(v));
  const std::string text = Render(w);
  EXPECT_NE(text.find("t: i32[13] = { 0, 10, 20, 30, 40, ..., 80, 90, 100, 110, 120 }\n"), std::string::npos) << text;
}

TEST(OinfRender, PrintsRowsOfMatrices) {
  Writer w;
  std::vector<uint8_t> v(12 * 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>(i);
  w.AddTensor("k", ValueType::kU8, {12, 2}, v);
  const std::string text = Render(w);
  EXPECT_NE(text.find("k: u8[12, 2] = {\n{ 0, 1 } ,\n{ 2, 3 } ,\n{ 4, 5 } ,\n{ 6, 7 } ,\n{ 8, 9 } ,\n...\n"
                      "{ 14, 15 } ,\n{ 16, 17 } ,\n{ 18, 19 } ,\n{ 20, 21 } ,\n{ 22, 23 } ,\n}\n"),
            std::string::npos)
      << text;
}

TEST(OinfRender, HandlesNanConstantAndEmptyTensors) {
  Writer w;
  w.AddTensor("n", ValueType::kF32, {2}, Bytes<float>({NAN, 1.0f}));
  w.AddTensor("c", ValueType::kF64, {3}, Bytes<double>({2.0, 2.0, 2.0}));
  w.AddTensor("e", ValueType::kF32, {0}, std::vector<uint8_t>{});
  w.AddTensor("h", ValueType::kF16, {2}, Bytes<uint16_t>({0x3C00, 0x7C00}));
  const std::string text = Render(w);
  EXPECT_NE(text.find("n: f32[2] = { nan, 1 }\n- [nbytes: 8, min: nan, max: nan, mean: nan, median: nan, std: nan]\n"
                      "- hist:\n    (not finite)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("c: f64[3] = { 2, 2, 2 }\n- [nbytes: 24, min: 2, max: 2, mean: 2, median: 2, std: 0]\n"
                      "- hist:\n    [2,2]:3\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("e: f32[0] = { }\n\n"), std::string::npos) << text;
  EXPECT_NE(text.find("h: f16[2] = { 1, inf }\n"), std::string::npos) << text;
  EXPECT_NE(text.find("- hist:\n    (not finite)\n\n"), std::string::npos);
}

}  // namespace
}  // namespace oaaxvk::oinf
