#include "ocr/image.h"

// jpeglib.h uses FILE and size_t without including their headers.
#include <cstdio>
#include <jpeglib.h>
#include <spng.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>

namespace oaaxvk::ocr {
namespace {

constexpr uint8_t kPngSignature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};

StatusOr<Image> DecodePng(const std::vector<uint8_t>& bytes, const std::string& what) {
  std::unique_ptr<spng_ctx, void (*)(spng_ctx*)> ctx(spng_ctx_new(0), spng_ctx_free);
  if (!ctx) return ResourceExhausted(what + ": cannot allocate a PNG decoder");
  spng_set_image_limits(ctx.get(), kMaxImageSide, kMaxImageSide);
  spng_set_crc_action(ctx.get(), SPNG_CRC_ERROR, SPNG_CRC_ERROR);
  int err = spng_set_png_buffer(ctx.get(), bytes.data(), bytes.size());
  spng_ihdr ihdr{};
  if (!err) err = spng_get_ihdr(ctx.get(), &ihdr);
  if (err == SPNG_EWIDTH || err == SPNG_EHEIGHT || err == SPNG_EUSER_WIDTH || err == SPNG_EUSER_HEIGHT) {
    return ResourceExhausted(StrFormat("%s: PNG is larger than %d pixels on a side", what.c_str(), kMaxImageSide));
  }
  if (err) return DataLoss(StrFormat("%s: PNG header: %s", what.c_str(), spng_strerror(err)));
  size_t size = 0;
  err = spng_decoded_image_size(ctx.get(), SPNG_FMT_RGB8, &size);
  if (err) return DataLoss(StrFormat("%s: PNG: %s", what.c_str(), spng_strerror(err)));
  Image img;
  img.width = static_cast<int>(ihdr.width);
  img.height = static_cast<int>(ihdr.height);
  if (size != static_cast<size_t>(img.width) * img.height * 3) {
    return Internal(StrFormat("%s: PNG decoder reports %zu bytes for %dx%d RGB", what.c_str(), size, img.width, img.height));
  }
  img.rgb.resize(size);
  err = spng_decode_image(ctx.get(), img.rgb.data(), size, SPNG_FMT_RGB8, 0);
  if (err) return DataLoss(StrFormat("%s: PNG image data: %s", what.c_str(), spng_strerror(err)));
  return img;
}

struct JpegError {
  jpeg_error_mgr mgr;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void JpegErrorExit(j_common_ptr cinfo) {
  auto* e = reinterpret_cast<JpegError*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, e->message);
  longjmp(e->jump, 1);
}

// Only trivially destructible objects live between setjmp and longjmp here.
// Returns 0 on success, 1 on a libjpeg error (message in err.message), 2 when
// the image is too large; on success *w, *h are set and *pixels is malloc'd.
int DecodeJpegRaw(const uint8_t* data, size_t size, JpegError& err, int* w, int* h, uint8_t** pixels) {
  jpeg_decompress_struct cinfo;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = JpegErrorExit;
  *pixels = nullptr;
  if (setjmp(err.jump)) {
    jpeg_destroy_decompress(&cinfo);
    std::free(*pixels);
    *pixels = nullptr;
    return 1;
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, data, static_cast<unsigned long>(size));
  jpeg_read_header(&cinfo, TRUE);
  if (cinfo.image_width > static_cast<unsigned>(kMaxImageSide) || cinfo.image_height > static_cast<unsigned>(kMaxImageSide)) {
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  cinfo.out_color_space = JCS_RGB;
  jpeg_start_decompress(&cinfo);
  *w = static_cast<int>(cinfo.output_width);
  *h = static_cast<int>(cinfo.output_height);
  const size_t stride = static_cast<size_t>(*w) * 3;
  *pixels = static_cast<uint8_t*>(std::malloc(stride * static_cast<size_t>(*h)));
  if (*pixels == nullptr) {
    jpeg_destroy_decompress(&cinfo);
    return 2;
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = *pixels + stride * cinfo.output_scanline;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  return 0;
}

StatusOr<Image> DecodeJpeg(const std::vector<uint8_t>& bytes, const std::string& what) {
  JpegError err{};
  int w = 0, h = 0;
  uint8_t* pixels = nullptr;
  int rc = DecodeJpegRaw(bytes.data(), bytes.size(), err, &w, &h, &pixels);
  if (rc == 1) return DataLoss(what + ": JPEG: " + err.message);
  if (rc == 2) return ResourceExhausted(StrFormat("%s: JPEG is larger than %d pixels on a side", what.c_str(), kMaxImageSide));
  Image img;
  img.width = w;
  img.height = h;
  img.rgb.assign(pixels, pixels + static_cast<size_t>(w) * h * 3);
  std::free(pixels);
  return img;
}

}  // namespace

StatusOr<Image> DecodeImage(const std::vector<uint8_t>& bytes, const std::string& what) {
  if (bytes.size() >= 8 && std::memcmp(bytes.data(), kPngSignature, 8) == 0) return DecodePng(bytes, what);
  if (bytes.size() >= 3 && bytes[0] == 0xff && bytes[1] == 0xd8 && bytes[2] == 0xff) return DecodeJpeg(bytes, what);
  return InvalidArgument(what + ": not a PNG or JPEG file (unknown signature)");
}

StatusOr<Image> ReadImage(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound(path + ": cannot open image: " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return DataLoss(path + ": read error");
  return DecodeImage(bytes, path);
}

Status WritePng(const Image& image, const std::string& path) {
  if (image.width <= 0 || image.height <= 0 || image.rgb.size() != static_cast<size_t>(image.width) * image.height * 3) {
    return InvalidArgument(StrFormat("%s: cannot write a %dx%d image with %zu bytes", path.c_str(), image.width,
                                     image.height, image.rgb.size()));
  }
  std::unique_ptr<spng_ctx, void (*)(spng_ctx*)> ctx(spng_ctx_new(SPNG_CTX_ENCODER), spng_ctx_free);
  if (!ctx) return ResourceExhausted(path + ": cannot allocate a PNG encoder");
  spng_set_option(ctx.get(), SPNG_ENCODE_TO_BUFFER, 1);
  spng_ihdr ihdr{};
  ihdr.width = static_cast<uint32_t>(image.width);
  ihdr.height = static_cast<uint32_t>(image.height);
  ihdr.bit_depth = 8;
  ihdr.color_type = SPNG_COLOR_TYPE_TRUECOLOR;
  int err = spng_set_ihdr(ctx.get(), &ihdr);
  if (!err) err = spng_encode_image(ctx.get(), image.rgb.data(), image.rgb.size(), SPNG_FMT_PNG, SPNG_ENCODE_FINALIZE);
  if (err) return Internal(StrFormat("%s: PNG encoder: %s", path.c_str(), spng_strerror(err)));
  size_t size = 0;
  void* png = spng_get_png_buffer(ctx.get(), &size, &err);
  if (png == nullptr) return Internal(StrFormat("%s: PNG encoder: %s", path.c_str(), spng_strerror(err)));
  std::unique_ptr<void, void (*)(void*)> owned(png, std::free);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return NotFound(path + ": cannot create file: " + std::strerror(errno));
  f.write(static_cast<const char*>(png), static_cast<std::streamsize>(size));
  f.close();
  if (!f) return DataLoss(path + ": write error");
  return Status::Ok();
}

std::vector<float> ResizeBilinear(const Image& src, int out_w, int out_h) {
  std::vector<float> out(static_cast<size_t>(out_w) * out_h * 3);
  const double sx = static_cast<double>(src.width) / out_w;
  const double sy = static_cast<double>(src.height) / out_h;
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      SampleBilinear(src, (x + 0.5) * sx - 0.5, (y + 0.5) * sy - 0.5, &out[(static_cast<size_t>(y) * out_w + x) * 3]);
    }
  }
  return out;
}

void SampleBilinear(const Image& src, double x, double y, float* rgb_out) {
  x = std::clamp(x, 0.0, static_cast<double>(src.width - 1));
  y = std::clamp(y, 0.0, static_cast<double>(src.height - 1));
  const int x0 = static_cast<int>(x), y0 = static_cast<int>(y);
  const int x1 = std::min(x0 + 1, src.width - 1), y1 = std::min(y0 + 1, src.height - 1);
  const double fx = x - x0, fy = y - y0;
  for (int c = 0; c < 3; ++c) {
    const double top = src.at(x0, y0, c) * (1 - fx) + src.at(x1, y0, c) * fx;
    const double bottom = src.at(x0, y1, c) * (1 - fx) + src.at(x1, y1, c) * fx;
    rgb_out[c] = static_cast<float>(top * (1 - fy) + bottom * fy);
  }
}

void DrawPolygon(Image& image, const std::vector<PointF>& points, const uint8_t rgb[3], int thickness) {
  const int r = std::max(0, thickness / 2);
  auto plot = [&](int px, int py) {
    for (int dy = -r; dy <= r; ++dy) {
      for (int dx = -r; dx <= r; ++dx) {
        const int x = px + dx, y = py + dy;
        if (x < 0 || y < 0 || x >= image.width || y >= image.height) continue;
        std::memcpy(&image.rgb[(static_cast<size_t>(y) * image.width + x) * 3], rgb, 3);
      }
    }
  };
  for (size_t i = 0; i < points.size(); ++i) {
    const PointF a = points[i], b = points[(i + 1) % points.size()];
    const double len = std::max(std::abs(b.x - a.x), std::abs(b.y - a.y));
    const int steps = std::max(1, static_cast<int>(std::ceil(len)));
    for (int s = 0; s <= steps; ++s) {
      const double t = static_cast<double>(s) / steps;
      plot(static_cast<int>(std::lround(a.x + (b.x - a.x) * t)), static_cast<int>(std::lround(a.y + (b.y - a.y) * t)));
    }
  }
}

}  // namespace oaaxvk::ocr
