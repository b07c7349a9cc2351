// Unit tests of the OCR example's pre/post-processing (no model, no device).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>

#include "oaax_vulkan/oinf.h"
#include "ocr/engine.h"
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

TEST(OcrDetInput, PerImageSizeFitsTheRanges) {
  DetInputOptions o;  // unbounded: the PP-OCR size itself, no padding
  auto a = PlanDetInput(384, 191, o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->height, 192);
  EXPECT_EQ(a->width, 384);
  EXPECT_EQ(a->resized_height, 192);
  EXPECT_EQ(a->resized_width, 384);
  // A bundle's ranges H, W in 32..960, multiple of 32: the same sizes.
  o.height = o.width = SizeRange{32, 960, 32};
  auto b = PlanDetInput(1920, 1080, o);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->height, 544);
  EXPECT_EQ(b->width, 960);
  EXPECT_EQ(b->resized_height, 544);
  // A tighter range: 544x960 scaled down to fit 640 wide (aspect kept), the
  // tensor rounded up to the multiple.
  o.width = SizeRange{32, 640, 32};
  auto c = PlanDetInput(1920, 1080, o);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->resized_width, 640);
  EXPECT_EQ(c->resized_height, 362);  // 544 * 640/960 = 362.67
  EXPECT_EQ(c->height, 384);
  EXPECT_EQ(c->width, 640);
  // A minimum above the PP-OCR size pads.
  o.height = SizeRange{64, 960, 64};
  auto d = PlanDetInput(10, 10, o);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->resized_height, 32);
  EXPECT_EQ(d->height, 64);
  EXPECT_EQ(d->width, 32);
  // One symbol for H and W: square.
  o.height = o.width = SizeRange{32, 960, 32};
  o.square = true;
  auto e = PlanDetInput(384, 191, o);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->height, 384);
  EXPECT_EQ(e->width, 384);
  EXPECT_EQ(e->resized_height, 192);
  // A fixed size wins over the ranges.
  o.square = false;
  o.fixed_height = 96, o.fixed_width = 128;
  auto f = PlanDetInput(384, 191, o);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->height, 96);
  EXPECT_EQ(f->width, 128);
  EXPECT_EQ(f->resized_width, 128);
  EXPECT_EQ(f->resized_height, 64);
  // Empty or malformed ranges are refused, naming the side.
  DetInputOptions bad;
  bad.width = SizeRange{64, 32, 32};
  auto g = PlanDetInput(384, 191, bad);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("width range [64, 32]"), std::string::npos) << g.status().ToString();
  bad.width = SizeRange{32, 100, 32};
  EXPECT_FALSE(PlanDetInput(384, 191, bad).ok());
  EXPECT_FALSE(PlanDetInput(0, 10, DetInputOptions{}).ok());
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
  o.min_width = o.max_width = 320, o.width_multiple = 1;  // a static model: every crop padded to 320
  const auto in = PrepareRecInput(img, q, o);
  ASSERT_TRUE(in.ok()) << in.status().ToString();
  ASSERT_EQ(in->data.size(), 3u * 48 * 320);
  EXPECT_EQ(in->width, 320);
  EXPECT_EQ(in->content_width, 144);
  EXPECT_NEAR(in->data[20 * 320 + 70], 1.0f, 1e-5);  // inside: white -> 1
  EXPECT_NEAR(in->data[2 * 48 * 320 + 24 * 320 + 100], 1.0f, 1e-5);
  EXPECT_EQ(in->data[20 * 320 + 144], 0.0f);  // padding
  EXPECT_EQ(in->data[20 * 320 + 319], 0.0f);
  // A tall box is rotated: 10 wide x 40 high -> line 40 x 10 -> width 192.
  const Quad tall{PointF{100, 5}, {110, 5}, {110, 45}, {100, 45}};
  const auto t = PrepareRecInput(img, tall, o);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->content_width, 192);
  EXPECT_LT(t->data[20 * 320 + 100], 0.0f);  // black region, inside the 192-wide line
  EXPECT_EQ(t->data[20 * 320 + 192], 0.0f);  // padding

  // Per-crop widths (the defaults: 32..1280, multiple of 32): 144 -> 160,
  // the same pixels as the static crop in the first 144 columns.
  const auto d = PrepareRecInput(img, q, RecInputOptions{});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->width, 160);
  EXPECT_EQ(d->content_width, 144);
  ASSERT_EQ(d->data.size(), 3u * 48 * 160);
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < 48; ++y)
      for (int x = 0; x < 160; ++x) {
        const float want = x < 144 ? in->data[(c * 48 + y) * 320 + x] : 0.0f;
        ASSERT_EQ(d->data[(c * 48 + y) * 160 + x], want) << c << " " << y << " " << x;
      }
  const auto dt = PrepareRecInput(img, tall, RecInputOptions{});
  ASSERT_TRUE(dt.ok());
  EXPECT_EQ(dt->width, 192);  // already a multiple of 32: no padding

  RecInputOptions bad;
  bad.max_width = 16;  // below min_width 32
  auto e = PrepareRecInput(img, q, bad);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
  bad = RecInputOptions{};
  bad.width_multiple = 0;
  EXPECT_FALSE(PrepareRecInput(img, q, bad).ok());
}

TEST(OcrRecInput, WidthsFollowTheAspectRatioWithinTheRange) {
  RecInputOptions o;  // 48 high, 32..1280, multiple of 32
  EXPECT_EQ(RecContentWidth(380, 20, o), 912);   // ceil(48 * 19)
  EXPECT_EQ(RecContentWidth(381, 20, o), 915);   // ceil(914.4)
  EXPECT_EQ(RecContentWidth(2000, 20, o), 1280); // capped: squeezed into the largest width
  EXPECT_EQ(RecContentWidth(1, 100, o), 1);
  EXPECT_EQ(RecTensorWidth(912, o), 928);
  EXPECT_EQ(RecTensorWidth(915, o), 928);
  EXPECT_EQ(RecTensorWidth(928, o), 928);
  EXPECT_EQ(RecTensorWidth(1, o), 32);
  EXPECT_EQ(RecTensorWidth(1280, o), 1280);
  o.min_width = 48, o.max_width = 960, o.width_multiple = 8;
  EXPECT_EQ(RecTensorWidth(10, o), 48);
  EXPECT_EQ(RecTensorWidth(913, o), 920);
  o.width_multiple = 128;  // a coarser multiple than the range's: rounds up, clamped to max
  EXPECT_EQ(RecTensorWidth(913, o), 960);
  EXPECT_EQ(RecTensorWidth(200, o), 256);
}

// The input dims a bundle declares, as ReadBundleInputDims returns them.
InputDim Static(int64_t v) { return InputDim{"", v, v, v, 1}; }
InputDim Sym(const char* s, int64_t lo, int64_t hi, int64_t m) { return InputDim{s, hi, lo, hi, m}; }

TEST(OcrFitInputs, DynamicBundlesGiveSizesPerImageAndPerCrop) {
  OcrOptions o;
  const std::vector<InputDim> det = {Static(1), Static(3), Sym("H", 32, 960, 32), Sym("W", 32, 960, 32)};
  const std::vector<InputDim> rec = {Static(1), Static(3), Static(48), Sym("W", 48, 960, 8)};
  ASSERT_TRUE(FitInputsToModels(det, "det.oinf", rec, "rec.oinf", ShapeRequest{}, &o).ok());
  EXPECT_EQ(o.det.fixed_height, 0);
  EXPECT_EQ(o.det.height.max, 960);
  EXPECT_EQ(o.det.width.multiple_of, 32);
  EXPECT_FALSE(o.det.square);
  EXPECT_EQ(o.rec.height, 48);
  EXPECT_EQ(o.rec.min_width, 48);
  EXPECT_EQ(o.rec.max_width, 960);
  EXPECT_EQ(o.rec.width_multiple, 8);

  ShapeRequest fixed;
  fixed.det_height = 192, fixed.det_width = 384, fixed.rec_width = 640;
  ASSERT_TRUE(FitInputsToModels(det, "det.oinf", rec, "rec.oinf", fixed, &o).ok());
  EXPECT_EQ(o.det.fixed_height, 192);
  EXPECT_EQ(o.det.fixed_width, 384);
  EXPECT_EQ(o.rec.min_width, 640);
  EXPECT_EQ(o.rec.max_width, 640);

  ShapeRequest coarse;
  coarse.rec_width_multiple = 64;
  ASSERT_TRUE(FitInputsToModels(det, "det.oinf", rec, "rec.oinf", coarse, &o).ok());
  EXPECT_EQ(o.rec.width_multiple, 64);
  EXPECT_EQ(o.det.fixed_height, 0);  // reset: nothing fixed this time

  // Out of range, off the multiple, not a multiple of the step: named.
  ShapeRequest big;
  big.det_height = 1024, big.det_width = 384;
  Status s = FitInputsToModels(det, "det.oinf", rec, "rec.oinf", big, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("H = 1024 is outside H in [32, 960], multiple of 32"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("det.oinf"), std::string::npos);
  ShapeRequest off;
  off.rec_width = 644;
  s = FitInputsToModels(det, "det.oinf", rec, "rec.oinf", off, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("W = 644 is not a valid size of W in [48, 960], multiple of 8"), std::string::npos)
      << s.ToString();
  coarse.rec_width_multiple = 12;
  s = FitInputsToModels(det, "det.oinf", rec, "rec.oinf", coarse, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("not a multiple of 8"), std::string::npos) << s.ToString();

  // One symbol for H and W: a square input.
  const std::vector<InputDim> sq = {Static(1), Static(3), Sym("S", 32, 640, 32), Sym("S", 32, 640, 32)};
  ASSERT_TRUE(FitInputsToModels(sq, "sq.oinf", rec, "rec.oinf", ShapeRequest{}, &o).ok());
  EXPECT_TRUE(o.det.square);
  s = FitInputsToModels(sq, "sq.oinf", rec, "rec.oinf", fixed, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("must be square"), std::string::npos) << s.ToString();
}

TEST(OcrFitInputs, StaticBundlesFixTheSizes) {
  OcrOptions o;
  const std::vector<InputDim> det = {Static(1), Static(3), Static(192), Static(384)};
  const std::vector<InputDim> rec = {Static(1), Static(3), Static(48), Static(640)};
  ASSERT_TRUE(FitInputsToModels(det, "det.oinf", rec, "rec.oinf", ShapeRequest{}, &o).ok());
  auto plan = PlanDetInput(800, 600, o.det);  // PP-OCR size 608x800, scaled to fit 192x384
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->height, 192);
  EXPECT_EQ(plan->width, 384);
  EXPECT_EQ(plan->resized_height, 192);
  EXPECT_EQ(plan->resized_width, 252);
  EXPECT_EQ(o.rec.min_width, 640);
  EXPECT_EQ(o.rec.max_width, 640);
  EXPECT_EQ(RecTensorWidth(100, o.rec), 640);

  ShapeRequest same;
  same.det_height = 192, same.det_width = 384, same.rec_width = 640;
  EXPECT_TRUE(FitInputsToModels(det, "det.oinf", rec, "rec.oinf", same, &o).ok());
  ShapeRequest other;
  other.rec_width = 320;
  Status s = FitInputsToModels(det, "det.oinf", rec, "rec.oinf", other, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("W = 320 differs from the model's static size 640"), std::string::npos) << s.ToString();
  ShapeRequest coarse;
  coarse.rec_width_multiple = 64;
  s = FitInputsToModels(det, "det.oinf", rec, "rec.oinf", coarse, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("static width 640"), std::string::npos) << s.ToString();

  // Not [1, 3, H, W]: the shape is named.
  const std::vector<InputDim> batch4 = {Static(4), Static(3), Static(48), Static(640)};
  s = FitInputsToModels(det, "det.oinf", batch4, "rec.oinf", ShapeRequest{}, &o);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("[4, 3, 48, 640]"), std::string::npos) << s.ToString();
  // A symbolic recognition height must accept 48.
  const std::vector<InputDim> h32 = {Static(1), Static(3), Sym("H", 32, 32, 32), Static(640)};
  EXPECT_FALSE(FitInputsToModels(det, "det.oinf", h32, "rec.oinf", ShapeRequest{}, &o).ok());
}

TEST(OcrFitInputs, AnyShapeEngineUsesThePpOcrSizes) {
  OcrOptions o;
  o.rec.min_width = o.rec.max_width = 640;  // left from a static bundle: reset
  o.det.fixed_height = o.det.fixed_width = 64;
  ASSERT_TRUE(FitInputsToModels({}, "det.onnx", {}, "rec.onnx", ShapeRequest{}, &o).ok());
  EXPECT_EQ(o.det.fixed_height, 0);
  EXPECT_EQ(o.det.height.max, 0);  // unbounded
  EXPECT_EQ(o.rec.min_width, RecInputOptions{}.min_width);
  EXPECT_EQ(o.rec.max_width, RecInputOptions{}.max_width);
  ShapeRequest r;
  r.rec_width = 640;
  ASSERT_TRUE(FitInputsToModels({}, "det.onnx", {}, "rec.onnx", r, &o).ok());
  EXPECT_EQ(o.rec.min_width, 640);
  EXPECT_EQ(o.rec.max_width, 640);
  r.rec_width_multiple = 64;
  EXPECT_FALSE(FitInputsToModels({}, "det.onnx", {}, "rec.onnx", r, &o).ok());  // both given
}

// Bundle metadata as docs/bundle-format.md lays it out: io.input.0.shape,
// and for dynamic shapes the symbols, shape.program and shape.refs.
std::vector<uint8_t> I64Bytes(const std::vector<int64_t>& v) {
  std::vector<uint8_t> b(v.size() * 8);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

void AddSymbol(oinf::Writer& w, int k, const std::string& name, int64_t lo, int64_t hi, int64_t m) {
  const std::string p = "shape.symbol." + std::to_string(k) + ".";
  w.AddMetadata(p + "name", oinf::MetadataValue::NdArray(oinf::ValueType::kU8, {name.size()},
                                                          std::vector<uint8_t>(name.begin(), name.end())));
  w.AddMetadata(p + "min", oinf::MetadataValue::Scalar<int64_t>(lo));
  w.AddMetadata(p + "max", oinf::MetadataValue::Scalar<int64_t>(hi));
  w.AddMetadata(p + "multiple_of", oinf::MetadataValue::Scalar<int64_t>(m));
}

TEST(OcrBundleInputs, ReadsStaticSizesAndSymbolRanges) {
  const std::string path = TempPath("dims.oinf");
  {
    oinf::Writer w;
    w.AddMetadata("io.input.0.shape", oinf::MetadataValue::NdArray(oinf::ValueType::kI64, {4}, I64Bytes({1, 3, 48, 1280})));
    oinf::Writer stat = w;
    ASSERT_TRUE(stat.WriteFile(path).ok());
    auto dims = ReadBundleInputDims(path);
    ASSERT_TRUE(dims.ok()) << dims.status().ToString();
    ASSERT_EQ(dims->size(), 4u);
    EXPECT_FALSE((*dims)[3].is_symbolic());
    EXPECT_EQ((*dims)[3].value, 1280);
    EXPECT_TRUE((*dims)[3].Accepts(1280));
    EXPECT_FALSE((*dims)[3].Accepts(640));
    EXPECT_EQ(InputDimsString(*dims), "[1, 3, 48, 1280]");

    // W in 32..1280 step 32 bound to dimension 3 of input 0 (an output
    // dimension ref of kind 3 is ignored).
    w.AddMetadata("shape.symbols", oinf::MetadataValue::Scalar<uint32_t>(1));
    AddSymbol(w, 0, "W", 32, 1280, 32);
    w.AddTensor("shape.program", oinf::ValueType::kI64, {2, 3}, I64Bytes({1, 0, 0, 0, 8, 0}));
    const std::vector<uint32_t> refs = {3, 0, 1, 0, 2, 0, 3, 0};
    w.AddTensor("shape.refs", oinf::ValueType::kU32, {2, 4}, refs.data(), refs.size() * 4);
    ASSERT_TRUE(w.WriteFile(path).ok());
  }
  auto dims = ReadBundleInputDims(path);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  ASSERT_EQ(dims->size(), 4u);
  const InputDim& w = (*dims)[3];
  EXPECT_TRUE(w.is_symbolic());
  EXPECT_EQ(w.symbol, "W");
  EXPECT_EQ(w.min, 32);
  EXPECT_EQ(w.max, 1280);
  EXPECT_EQ(w.multiple_of, 32);
  EXPECT_TRUE(w.Accepts(640));
  EXPECT_FALSE(w.Accepts(648));
  EXPECT_FALSE(w.Accepts(1312));
  EXPECT_EQ(w.ToString(), "W in [32, 1280], multiple of 32");
  EXPECT_FALSE((*dims)[2].is_symbolic());
  EXPECT_EQ(InputDimsString(*dims), "[1, 3, 48, W]");

  {  // A ref to an instruction that is not a symbol: refused, naming the row.
    oinf::Writer w;
    w.AddMetadata("io.input.0.shape", oinf::MetadataValue::NdArray(oinf::ValueType::kI64, {4}, I64Bytes({1, 3, 48, 1280})));
    w.AddMetadata("shape.symbols", oinf::MetadataValue::Scalar<uint32_t>(1));
    AddSymbol(w, 0, "W", 32, 1280, 32);
    w.AddTensor("shape.program", oinf::ValueType::kI64, {1, 3}, I64Bytes({0, 1280, 0}));
    const std::vector<uint32_t> refs = {2, 0, 3, 0};
    w.AddTensor("shape.refs", oinf::ValueType::kU32, {1, 4}, refs.data(), refs.size() * 4);
    ASSERT_TRUE(w.WriteFile(path).ok());
  }
  auto broken = ReadBundleInputDims(path);
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(broken.status().message().find("shape.refs row 0"), std::string::npos) << broken.status().ToString();
  {
    oinf::Writer w;  // no io.input.0.shape
    ASSERT_TRUE(w.WriteFile(path).ok());
  }
  auto none = ReadBundleInputDims(path);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("io.input.0.shape"), std::string::npos);
  std::remove(path.c_str());
  EXPECT_FALSE(ReadBundleInputDims(path).ok());
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
