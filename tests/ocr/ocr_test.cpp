// Unit tests of the OCR example's pre/post-processing (no model, no device).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "ocr/image.h"
#include "ocr/ocr.h"
#include "ocr/pipeline.h"

namespace oaaxvk::ocr {
namespace {

Image Gradient(int w, int h) {
  Image img;
  img.width = w, img.height = h;
  img.rgb.resize(static_cast<size_t>(w) * h * 3);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t* p = &img.rgb[(static_cast<size_t>(y) * w + x) * 3];
      p[0] = static_cast<uint8_t>(x * 7 % 256), p[1] = static_cast<uint8_t>(y * 5 % 256), p[2] = static_cast<uint8_t>((x + y) % 256);
    }
  }
  return img;
}

std::string TempPath(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("oaaxvk_ocr_test_") + std::to_string(getpid()) + name)).string();
}

TEST(OcrImage, PngRoundTripIsLossless) {
  const Image img = Gradient(13, 7);
  const std::string path = TempPath("rt.png");
  ASSERT_TRUE(WritePng(img, path).ok());
  auto back = ReadImage(path);
  std::remove(path.c_str());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->width, 13);
  EXPECT_EQ(back->height, 7);
  EXPECT_EQ(back->rgb, img.rgb);
}

TEST(OcrImage, RejectsUnknownSignatureAndTruncatedPng) {
  auto bad = DecodeImage({'G', 'I', 'F', '8', '9', 'a', 0, 0, 0}, "x.gif");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("x.gif"), std::string::npos);
  const std::string path = TempPath("trunc.png");
  ASSERT_TRUE(WritePng(Gradient(31, 17), path).ok());
  std::ifstream f(path, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  bytes.resize(bytes.size() / 2);
  auto trunc = DecodeImage(bytes, "half.png");
  ASSERT_FALSE(trunc.ok());
  EXPECT_NE(trunc.status().message().find("half.png"), std::string::npos);
  auto jpg = DecodeImage({0xff, 0xd8, 0xff, 0xe0, 0, 0x10, 'J', 'F'}, "cut.jpg");
  ASSERT_FALSE(jpg.ok());
  EXPECT_EQ(jpg.status().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(ReadImage("/nonexistent/dir/p.png").ok());
}

// A baseline JPEG (8x8 grey 128, made with PIL: Image.new("L",(8,8),128).save(q=95)).
TEST(OcrImage, DecodesGreyJpegToRgb) {
  const char* path = OAAXVK_OCR_TEST_DATA "/grey8x8.jpg";
  auto img = ReadImage(path);
  ASSERT_TRUE(img.ok()) << img.status().ToString();
  ASSERT_EQ(img->width, 8);
  ASSERT_EQ(img->height, 8);
  for (uint8_t v : img->rgb) EXPECT_NEAR(v, 128, 1);
}

TEST(OcrImage, ResizeBilinearMatchesHalfPixelCentres) {
  Image img;
  img.width = 2, img.height = 1;
  img.rgb = {0, 0, 0, 100, 100, 100};
  const auto out = ResizeBilinear(img, 4, 1);
  // Source x = (dst + 0.5) / 2 - 0.5: -0.25 (clamped), 0.25, 0.75, 1.25 (clamped).
  const float want[4] = {0, 25, 75, 100};
  for (int x = 0; x < 4; ++x) EXPECT_NEAR(out[x * 3], want[x], 1e-4) << x;
  const Image g = Gradient(13, 11);
  const auto same = ResizeBilinear(g, 13, 11);
  for (size_t i = 0; i < same.size(); ++i) ASSERT_EQ(same[i], g.rgb[i]);
}

TEST(OcrDetInput, NaturalSizeIsMultipleOf32AndLimited) {
  EXPECT_EQ(DetNaturalSize(384, 191, 960), (std::array<int, 2>{192, 384}));
  EXPECT_EQ(DetNaturalSize(10, 10, 960), (std::array<int, 2>{32, 32}));
  EXPECT_EQ(DetNaturalSize(1920, 1080, 960), (std::array<int, 2>{544, 960}));
}

TEST(OcrDetInput, NormalizesAndPadsToFixedShape) {
  Image img;
  img.width = 40, img.height = 20;
  img.rgb.assign(40 * 20 * 3, 255);
  DetInputOptions o;
  o.fixed_height = 64, o.fixed_width = 96;
  auto in = PrepareDetInput(img, o);
  ASSERT_TRUE(in.ok());
  EXPECT_EQ(in->height, 64);
  EXPECT_EQ(in->width, 96);
  EXPECT_EQ(in->resized_height, 32);  // round(20/32)*32 -> 32 (min 32)
  EXPECT_EQ(in->resized_width, 32);   // round(40/32)*32 = 32
  const size_t plane = 64 * 96;
  EXPECT_NEAR(in->data[0], (1.0f - 0.485f) / 0.229f, 1e-5);
  EXPECT_NEAR(in->data[plane * 2 + 31 * 96 + 31], (1.0f - 0.406f) / 0.225f, 1e-5);
  EXPECT_EQ(in->data[plane + 32], 0.0f);      // right padding
  EXPECT_EQ(in->data[plane + 40 * 96], 0.0f); // bottom padding
  // A page larger than the fixed shape is scaled down, aspect kept.
  Image big;
  big.width = 400, big.height = 100;
  big.rgb.assign(400 * 100 * 3, 0);
  auto in2 = PrepareDetInput(big, o);
  ASSERT_TRUE(in2.ok());
  EXPECT_EQ(in2->resized_width, 96);
  EXPECT_EQ(in2->resized_height, 22);  // 96 * 400/416 ... 416x96 scaled by 96/416
  o.fixed_width = 0;
  EXPECT_FALSE(PrepareDetInput(img, o).ok());
}

TEST(OcrDb, MinAreaRectOfRotatedRectangle) {
  // A rectangle 20 x 6 rotated by 30 degrees around (50, 40).
  const double c = std::cos(M_PI / 6), s = std::sin(M_PI / 6);
  std::vector<PointF> pts;
  for (double u = -10; u <= 10; u += 0.5) {
    for (double v = -3; v <= 3; v += 0.5) pts.push_back({50 + u * c - v * s, 40 + u * s + v * c});
  }
  double sside = 0;
  const Quad q = MinAreaRect(pts, &sside);
  EXPECT_NEAR(sside, 6, 1e-6);
  EXPECT_NEAR(std::hypot(q[1].x - q[0].x, q[1].y - q[0].y), 20, 1e-6);
  EXPECT_LT(q[0].x, q[1].x);  // TL, TR, BR, BL
  EXPECT_LT(q[3].x, q[2].x);
  double collinear = 1;
  MinAreaRect({{0, 0}, {1, 1}, {2, 2}}, &collinear);
  EXPECT_EQ(collinear, 0);
}

// Synthetic probability map with known text regions: two lines, one weak
// blob (score < 0.6), one speck (short side < 3) and padding that must be ignored.
TEST(OcrDb, FindsBoxesOnSyntheticMap) {
  const int H = 64, W = 96, VH = 60, VW = 80;
  std::vector<float> prob(H * W, 0.05f);
  auto fill = [&](int x0, int y0, int x1, int y1, float p) {
    for (int y = y0; y <= y1; ++y)
      for (int x = x0; x <= x1; ++x) prob[y * W + x] = p;
  };
  fill(40, 30, 70, 37, 0.9f);  // second line (right half)
  fill(10, 10, 69, 17, 0.95f); // first line
  fill(5, 30, 20, 37, 0.8f);   // left of the second line, same row
  fill(10, 45, 40, 52, 0.4f);  // weak: mean 0.4 < 0.6
  fill(60, 50, 61, 51, 0.99f); // 2x2 speck
  fill(82, 0, 95, 63, 1.0f);   // padding region
  auto boxes = DbPostprocess(prob.data(), H, W, VH, VW, /*image*/ 160, 120, DbOptions{});
  ASSERT_TRUE(boxes.ok()) << boxes.status().ToString();
  ASSERT_EQ(boxes->size(), 3u);
  // Unclip distance for 59 x 7: 59*7*1.5/(2*66) = 4.693...; scale x2 to the image.
  const double d = 59.0 * 7 * 1.5 / (2 * 66);
  const Quad& a = (*boxes)[0].box;
  EXPECT_NEAR(a[0].x, std::round((10 - d) * 2), 1);
  EXPECT_NEAR(a[0].y, std::round((10 - d) * 2), 1);
  EXPECT_NEAR(a[2].x, std::round((69 + d) * 2), 1);
  EXPECT_NEAR(a[2].y, std::round((17 + d) * 2), 1);
  EXPECT_NEAR((*boxes)[0].score, 0.95f, 1e-5);
  // Same row: left box first.
  EXPECT_LT((*boxes)[1].box[0].x, (*boxes)[2].box[0].x);
  EXPECT_NEAR((*boxes)[1].score, 0.8f, 1e-5);
  // Box scoring over the rectangle gives the same for filled rectangles.
  DbOptions fast;
  fast.score_mode = DbScoreMode::kBox;
  auto boxes2 = DbPostprocess(prob.data(), H, W, VH, VW, 160, 120, fast);
  ASSERT_TRUE(boxes2.ok());
  EXPECT_EQ(boxes2->size(), 3u);
  EXPECT_FALSE(DbPostprocess(prob.data(), H, W, H + 1, W, 10, 10, DbOptions{}).ok());
}

TEST(OcrDb, SortBoxesReadsLinesLeftToRight) {
  auto box = [](double x, double y) { return DetBox{Quad{PointF{x, y}, {x + 5, y}, {x + 5, y + 3}, {x, y + 3}}, 1}; };
  std::vector<DetBox> b = {box(50, 12), box(10, 30), box(0, 15), box(60, 31)};
  SortBoxes(b);
  EXPECT_EQ(b[0].box[0].x, 0);
  EXPECT_EQ(b[1].box[0].x, 50);
  EXPECT_EQ(b[2].box[0].x, 10);
  EXPECT_EQ(b[3].box[0].x, 60);
}

TEST(OcrRecInput, AxisAlignedCropResizesAndPads) {
  Image img;
  img.width = 200, img.height = 50;
  img.rgb.assign(200 * 50 * 3, 0);
  for (int y = 10; y < 34; ++y)
    for (int x = 20; x < 92; ++x)
      for (int c = 0; c < 3; ++c) img.rgb[(y * 200 + x) * 3 + c] = 255;
  // Box exactly the white 72 x 24 region (ratio 3 -> width 144 of 320).
  const Quad q{PointF{20, 10}, {92, 10}, {92, 34}, {20, 34}};
  RecInputOptions o;
  const auto in = PrepareRecInput(img, q, o);
  ASSERT_EQ(in.size(), 3u * 48 * 320);
  EXPECT_NEAR(in[20 * 320 + 70], 1.0f, 1e-5);          // inside: white -> 1
  EXPECT_NEAR(in[2 * 48 * 320 + 24 * 320 + 100], 1.0f, 1e-5);
  EXPECT_EQ(in[20 * 320 + 144], 0.0f);                 // padding
  EXPECT_EQ(in[20 * 320 + 319], 0.0f);
  // A tall box is rotated: 10 wide x 40 high -> line 40 x 10 -> width 192.
  const Quad tall{PointF{100, 5}, {110, 5}, {110, 45}, {100, 45}};
  const auto t = PrepareRecInput(img, tall, o);
  EXPECT_LT(t[20 * 320 + 100], 0.0f);  // black region, inside the 192-wide line
  EXPECT_EQ(t[20 * 320 + 192], 0.0f);  // padding
}

TEST(OcrCtc, GreedyDecodeCollapsesRepeatsAndDropsBlanks) {
  Charset cs;
  cs.symbols = {"", "a", "b", "\xe4\xb8\xad", " "};
  // steps: a a blank a b b space 中 blank
  const int seq[] = {1, 1, 0, 1, 2, 2, 4, 3, 0};
  const int T = 9, C = 5;
  std::vector<float> p(T * C, 0.01f);
  for (int t = 0; t < T; ++t) p[t * C + seq[t]] = 0.5f + 0.05f * t;
  auto d = CtcGreedyDecode(p.data(), T, C, cs);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->text, "aab \xe4\xb8\xad");
  // chosen steps 0, 3, 4, 6, 7
  EXPECT_NEAR(d->score, (0.5f + 0.65f + 0.7f + 0.8f + 0.85f) / 5, 1e-6);
  EXPECT_FALSE(CtcGreedyDecode(p.data(), T, 6, cs).ok());
  std::vector<float> blank(3 * C, 0.0f);
  for (int t = 0; t < 3; ++t) blank[t * C] = 1;
  auto e = CtcGreedyDecode(blank.data(), 3, C, cs);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->text, "");
  EXPECT_EQ(e->score, 0.0f);
}

TEST(OcrCtc, LoadsKeysWithBlankAndSpace) {
  const std::string path = TempPath("keys.txt");
  std::ofstream(path) << "a\r\nb\n\xe4\xb8\xad";
  auto cs = LoadCharset(path);
  std::remove(path.c_str());
  ASSERT_TRUE(cs.ok());
  EXPECT_EQ(cs->symbols, (std::vector<std::string>{"", "a", "b", "\xe4\xb8\xad", " "}));
  EXPECT_EQ(LoadCharset("/nonexistent/keys.txt").status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace oaaxvk::ocr
