// PP-OCR (v4) pre- and post-processing: detection input, DB post-processing,
// line crops, recognition input, CTC decoding. Pure CPU code; the models are
// run by an Engine (engine.h).
//
// Coordinates are pixels of the original image, x right, y down, pixel
// centres at integer coordinates. Tensors are float32, NCHW, row-major.
#ifndef OAAX_VULKAN_OCR_OCR_H_
#define OAAX_VULKAN_OCR_OCR_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ocr/image.h"
#include "oaax_vulkan/status.h"

namespace oaaxvk::ocr {

// A text box: corners in the order top-left, top-right, bottom-right,
// bottom-left (PP-OCR's order).
using Quad = std::array<PointF, 4>;

// ---- detection input ----

// The sizes a model accepts along one input dimension: min..max in steps of
// multiple_of (a bundle compiled for a range of shapes; docs/bundle-format.md,
// "Dynamic shapes"). max = 0 means no upper bound.
struct SizeRange {
  int min = 1;
  int max = 0;
  int multiple_of = 1;
};

struct DetInputOptions {
  int limit_side_len = 960;  // the longer side is scaled down to at most this
  // One tensor size for every image (a model with a static input shape, or a
  // size the user fixed). 0x0 = a size per image, see `height` / `width`.
  int fixed_height = 0;
  int fixed_width = 0;
  // Per-image sizes (fixed 0x0): the PP-OCR size, fitted to these ranges.
  // The defaults bound nothing, so the tensor is the PP-OCR size itself.
  SizeRange height, width;
  // Height and width are one symbol of the model (a square input): the
  // tensor is square, the larger of the two sizes.
  bool square = false;
};

struct DetInput {
  std::vector<float> data;   // [1, 3, height, width], (rgb/255 - mean) / std, zero padding
  int height = 0, width = 0; // tensor height/width
  int resized_height = 0;    // image content occupies rows [0, resized_height)
  int resized_width = 0;     // and columns [0, resized_width); the rest is padding
};

// PP-OCR det sizes for an image: scale so the longer side is <= limit, round
// each side to a multiple of 32 (>= 32). Returns {height, width}.
std::array<int, 2> DetNaturalSize(int image_width, int image_height, int limit_side_len);

// The detection tensor size for an image and where its content goes
// (DetInput without data): the image is resized to its PP-OCR size
// (DetNaturalSize); when that exceeds the largest tensor (the fixed size, or
// the ranges' max) it is scaled down, aspect kept, to fit; each tensor side is
// then the content's side rounded up to the range's multiple_of and raised to
// its min (a fixed size: exactly that size). The rest is zero padding, bottom
// and right. With unbounded ranges this is the PP-OCR size, no padding.
// Fails (kInvalidArgument) for an empty image, a fixed size that is not two
// positive sizes (or 0x0), or a range that is empty (min < 1, max < min,
// multiple_of < 1, or a max that is not a multiple of multiple_of).
StatusOr<DetInput> PlanDetInput(int image_width, int image_height, const DetInputOptions& options);

// Builds the detection input (PlanDetInput, then bilinear resize and
// normalization). Same errors as PlanDetInput.
StatusOr<DetInput> PrepareDetInput(const Image& image, const DetInputOptions& options);

// ---- DB post-processing ----

enum class DbScoreMode {
  kComponent,  // mean probability over the component's own pixels (PP-OCR score_mode "slow")
  kBox,        // mean probability inside the minimum-area rectangle (PP-OCR "fast")
};

struct DbOptions {
  float threshold = 0.3f;     // probability -> text pixel
  float box_threshold = 0.6f; // minimum mean probability inside a box
  float unclip_ratio = 1.5f;  // offset distance = area * ratio / perimeter
  int min_size = 3;           // minimum short side (map pixels) of a box
  int max_candidates = 1000;
  // kComponent by default: text lines on a curved page are bent, and their
  // rectangle then holds so much background that "fast" scoring drops them.
  DbScoreMode score_mode = DbScoreMode::kComponent;
};

struct DetBox {
  Quad box;     // image coordinates
  float score;  // mean probability inside the box (before unclipping)
};

// `prob` is the [map_height, map_width] probability map; only the region
// [0, valid_height) x [0, valid_width) (the image content) is used, and it
// maps onto an image of image_width x image_height. Components are
// 8-connected; each becomes its minimum-area rectangle, is scored, expanded by
// the unclip distance and scaled to the image. Boxes are returned sorted
// top-to-bottom, left-to-right (SortBoxes).
StatusOr<std::vector<DetBox>> DbPostprocess(const float* prob, int map_height, int map_width, int valid_height,
                                            int valid_width, int image_width, int image_height,
                                            const DbOptions& options);

// Minimum-area enclosing rectangle of `points` (rotating calipers over the
// convex hull), corners ordered as PP-OCR's get_mini_boxes (sorted by x; of
// the left pair the upper one is top-left, of the right pair the upper one is
// top-right). *short_side gets the rectangle's shorter side (0 when the
// points are collinear or fewer than 3).
Quad MinAreaRect(const std::vector<PointF>& points, double* short_side);

// Sorts boxes by top-left y then x, then swaps neighbours whose top-left y
// differ by less than 10 pixels so that a line reads left to right (PP-OCR's
// sorted_boxes).
void SortBoxes(std::vector<DetBox>& boxes);

// ---- recognition input ----

struct RecInputOptions {
  int height = 48;
  // Tensor widths: each crop is resized to `height`, its width following its
  // aspect ratio (capped at max_width); the tensor width is that width
  // rounded up to width_multiple, at least min_width and at most max_width;
  // the columns right of the crop are zero padding. min_width = max_width
  // gives every crop one width (a model with a static input shape). The
  // defaults are the range of tools/ocr/convert_models.sh's recognition
  // bundle: W in 32..1280, multiple of 32.
  int min_width = 32;
  int max_width = 1280;
  int width_multiple = 32;
};

struct RecInput {
  std::vector<float> data;  // [1, 3, height, width]
  int width = 0;            // the tensor width
  int content_width = 0;    // the crop occupies columns [0, content_width); the rest is zero
};

// The width of a line image resized to `options.height` from a crop of
// line_width x line_height pixels: ceil(height * line_width / line_height),
// at least 1, at most max_width (PP-OCR's resize_norm_img).
int RecContentWidth(double line_width, double line_height, const RecInputOptions& options);
// The tensor width for a line image of `content_width` columns: rounded up to
// width_multiple, clamped to [min_width, max_width]. Both functions expect
// options that PrepareRecInput accepts (widths in pixels).
int RecTensorWidth(int content_width, const RecInputOptions& options);

// Perspective-warps the quad of `image` into an upright line image resized
// to options.height (width by aspect ratio: RecContentWidth), rotated 90
// degrees counter-clockwise when the box is at least 1.5x taller than wide
// (PP-OCR's get_rotate_crop_image), and normalizes it to
// [1, 3, height, RecTensorWidth] with (x/255 - 0.5) / 0.5 and zero padding on
// the right. Fails (kInvalidArgument) when height < 1, min_width < 1,
// max_width < min_width or width_multiple < 1.
StatusOr<RecInput> PrepareRecInput(const Image& image, const Quad& box, const RecInputOptions& options);

// ---- CTC decoding ----

// The recognition alphabet: index 0 = CTC blank, 1..n = lines of the keys
// file, n + 1 = space.
struct Charset {
  std::vector<std::string> symbols;  // symbols[0] is "" (blank)
};
// Reads ppocr_keys_v1.txt (one UTF-8 symbol per line; "\r\n" accepted).
StatusOr<Charset> LoadCharset(const std::string& path);

struct Decoded {
  std::string text;
  float score = 0;  // mean of the chosen symbols' probabilities (0 when empty)
};
// Greedy CTC: argmax per step, repeats collapsed, blanks dropped. `probs` is
// [steps, classes]; classes must equal charset size (kInvalidArgument otherwise).
StatusOr<Decoded> CtcGreedyDecode(const float* probs, int steps, int classes, const Charset& charset);

}  // namespace oaaxvk::ocr

#endif  // OAAX_VULKAN_OCR_OCR_H_
