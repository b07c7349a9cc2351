// Image I/O and pixel operations for the OCR example (no Vulkan, no OAAX).
//
// Images are 8-bit RGB, interleaved, row-major, origin top-left: pixel (x, y)
// channel c is rgb[(y * width + x) * 3 + c]. Grey and palette PNGs, RGBA PNGs
// (alpha dropped) and grey/YCbCr/CMYK-free JPEGs are converted to RGB on decode.
#ifndef OAAX_VULKAN_OCR_IMAGE_H_
#define OAAX_VULKAN_OCR_IMAGE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "oaax_vulkan/status.h"

namespace oaaxvk::ocr {

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3 bytes
  uint8_t at(int x, int y, int c) const { return rgb[(static_cast<size_t>(y) * width + x) * 3 + c]; }
};

// Largest accepted width or height (pixels) of a decoded image.
constexpr int kMaxImageSide = 16384;

// Decodes a PNG (libspng) or JPEG (libjpeg-turbo) held in memory, chosen by
// its signature. `what` names the source in error messages (a path).
// Fails with kInvalidArgument for an unknown signature, kDataLoss for a
// corrupt file, kResourceExhausted beyond kMaxImageSide.
StatusOr<Image> DecodeImage(const std::vector<uint8_t>& bytes, const std::string& what);
// Reads `path` and decodes it (kNotFound when it cannot be read).
StatusOr<Image> ReadImage(const std::string& path);
// Writes `image` as an 8-bit RGB PNG to `path`.
Status WritePng(const Image& image, const std::string& path);

// Bilinear resize with half-pixel centres (as OpenCV's INTER_LINEAR without
// its fixed-point rounding): source coordinate = (dst + 0.5) * src/dst - 0.5,
// clamped to the border. Returns float RGB values in [0, 255], interleaved,
// out_w * out_h * 3. out_w, out_h >= 1.
std::vector<float> ResizeBilinear(const Image& src, int out_w, int out_h);

// Samples `src` at a real-valued position (pixel centres at integer
// coordinates), bilinear, replicating the border. Writes 3 floats to rgb_out.
void SampleBilinear(const Image& src, double x, double y, float* rgb_out);

// Draws a closed polygon with straight lines of the given colour and
// thickness (pixels); parts outside the image are clipped.
struct PointF {
  double x = 0, y = 0;
};
void DrawPolygon(Image& image, const std::vector<PointF>& points, const uint8_t rgb[3], int thickness);

}  // namespace oaaxvk::ocr

#endif  // OAAX_VULKAN_OCR_IMAGE_H_
