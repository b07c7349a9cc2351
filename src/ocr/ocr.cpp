#include "ocr/ocr.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

namespace oaaxvk::ocr {
namespace {

constexpr float kDetMean[3] = {0.485f, 0.456f, 0.406f};
constexpr float kDetStd[3] = {0.229f, 0.224f, 0.225f};

double Cross(const PointF& o, const PointF& a, const PointF& b) {
  return (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
}
double Dist(const PointF& a, const PointF& b) { return std::hypot(a.x - b.x, a.y - b.y); }

// Andrew's monotone chain; counter-clockwise (in y-down coordinates:
// clockwise on screen), no collinear points.
std::vector<PointF> ConvexHull(std::vector<PointF> pts) {
  std::sort(pts.begin(), pts.end(), [](const PointF& a, const PointF& b) { return a.x < b.x || (a.x == b.x && a.y < b.y); });
  pts.erase(std::unique(pts.begin(), pts.end(), [](const PointF& a, const PointF& b) { return a.x == b.x && a.y == b.y; }),
            pts.end());
  if (pts.size() < 3) return pts;
  std::vector<PointF> hull(2 * pts.size());
  size_t k = 0;
  for (size_t i = 0; i < pts.size(); ++i) {
    while (k >= 2 && Cross(hull[k - 2], hull[k - 1], pts[i]) <= 0) --k;
    hull[k++] = pts[i];
  }
  for (size_t i = pts.size() - 1, t = k + 1; i > 0; --i) {
    while (k >= t && Cross(hull[k - 2], hull[k - 1], pts[i - 1]) <= 0) --k;
    hull[k++] = pts[i - 1];
  }
  hull.resize(k - 1);
  return hull;
}

// PP-OCR's get_mini_boxes corner order for 4 rectangle corners.
Quad OrderCorners(std::array<PointF, 4> p) {
  std::stable_sort(p.begin(), p.end(), [](const PointF& a, const PointF& b) { return a.x < b.x; });
  const int i1 = p[1].y > p[0].y ? 0 : 1, i4 = p[1].y > p[0].y ? 1 : 0;
  const int i2 = p[3].y > p[2].y ? 2 : 3, i3 = p[3].y > p[2].y ? 3 : 2;
  return Quad{p[i1], p[i2], p[i3], p[i4]};
}

bool InsideConvex(const Quad& q, double x, double y) {
  bool pos = true, neg = true;
  for (int i = 0; i < 4; ++i) {
    const double c = Cross(q[i], q[(i + 1) % 4], PointF{x, y});
    if (c < -1e-9) pos = false;
    if (c > 1e-9) neg = false;
  }
  return pos || neg;
}

// Mean probability inside the box (PP-OCR's box_score_fast: the box's
// vertices truncated to integers, boundary pixels included).
float BoxScore(const float* prob, int map_width, int valid_h, int valid_w, const Quad& box) {
  double minx = box[0].x, maxx = box[0].x, miny = box[0].y, maxy = box[0].y;
  for (const PointF& p : box) {
    minx = std::min(minx, p.x), maxx = std::max(maxx, p.x);
    miny = std::min(miny, p.y), maxy = std::max(maxy, p.y);
  }
  const int x0 = std::clamp(static_cast<int>(std::floor(minx)), 0, valid_w - 1);
  const int x1 = std::clamp(static_cast<int>(std::ceil(maxx)), 0, valid_w - 1);
  const int y0 = std::clamp(static_cast<int>(std::floor(miny)), 0, valid_h - 1);
  const int y1 = std::clamp(static_cast<int>(std::ceil(maxy)), 0, valid_h - 1);
  Quad local;
  for (int i = 0; i < 4; ++i) {
    local[i] = PointF{std::trunc(box[i].x - x0), std::trunc(box[i].y - y0)};
  }
  double sum = 0;
  size_t n = 0;
  for (int y = y0; y <= y1; ++y) {
    for (int x = x0; x <= x1; ++x) {
      if (!InsideConvex(local, x - x0, y - y0)) continue;
      sum += prob[static_cast<size_t>(y) * map_width + x];
      ++n;
    }
  }
  return n ? static_cast<float>(sum / n) : 0.0f;
}

}  // namespace

std::array<int, 2> DetNaturalSize(int image_width, int image_height, int limit_side_len) {
  double ratio = 1.0;
  const int longer = std::max(image_width, image_height);
  if (longer > limit_side_len) ratio = static_cast<double>(limit_side_len) / longer;
  auto round32 = [](double v) { return std::max(32, static_cast<int>(std::lround(v / 32.0)) * 32); };
  return {round32(image_height * ratio), round32(image_width * ratio)};
}

namespace {

Status CheckRange(const SizeRange& r, const char* what) {
  if (r.min < 1 || r.multiple_of < 1 || r.max < 0 || (r.max != 0 && (r.max < r.min || r.max % r.multiple_of != 0))) {
    return InvalidArgument(StrFormat("detection input: the %s range [%d, %d], multiple of %d, is empty or malformed "
                                     "(min >= 1, max = 0 or a multiple of multiple_of >= min)",
                                     what, r.min, r.max, r.multiple_of));
  }
  return Status::Ok();
}

// The content's side rounded up to the range's multiple, at least min, at most max.
int FitSide(int content, const SizeRange& r) {
  int v = (content + r.multiple_of - 1) / r.multiple_of * r.multiple_of;
  v = std::max(v, r.min);
  if (r.max > 0) v = std::min(v, r.max);
  return v;
}

}  // namespace

StatusOr<DetInput> PlanDetInput(int image_width, int image_height, const DetInputOptions& options) {
  if (image_width <= 0 || image_height <= 0) return InvalidArgument("detection input: the image is empty");
  if (options.fixed_height < 0 || options.fixed_width < 0 || (options.fixed_height == 0) != (options.fixed_width == 0)) {
    return InvalidArgument(StrFormat("detection input: fixed shape %dx%d must be two positive sizes (or 0x0 for a size per image)",
                                     options.fixed_height, options.fixed_width));
  }
  SizeRange hr = options.height, wr = options.width;
  if (options.fixed_height > 0) {
    hr = SizeRange{options.fixed_height, options.fixed_height, 1};
    wr = SizeRange{options.fixed_width, options.fixed_width, 1};
  }
  OAAXVK_RETURN_IF_ERROR(CheckRange(hr, "height"));
  OAAXVK_RETURN_IF_ERROR(CheckRange(wr, "width"));
  const auto natural = DetNaturalSize(image_width, image_height, options.limit_side_len);
  int rh = natural[0], rw = natural[1];
  if ((hr.max > 0 && rh > hr.max) || (wr.max > 0 && rw > wr.max)) {
    double s = 1.0;
    if (hr.max > 0) s = std::min(s, static_cast<double>(hr.max) / rh);
    if (wr.max > 0) s = std::min(s, static_cast<double>(wr.max) / rw);
    rh = std::max(1, static_cast<int>(rh * s + 1e-9));
    rw = std::max(1, static_cast<int>(rw * s + 1e-9));
  }
  DetInput in;
  in.resized_height = rh, in.resized_width = rw;
  in.height = FitSide(rh, hr), in.width = FitSide(rw, wr);
  if (options.square) in.height = in.width = std::max(in.height, in.width);
  return in;
}

StatusOr<DetInput> PrepareDetInput(const Image& image, const DetInputOptions& options) {
  OAAXVK_ASSIGN_OR_RETURN(DetInput in, PlanDetInput(image.width, image.height, options));
  const int rh = in.resized_height, rw = in.resized_width;
  const std::vector<float> resized = ResizeBilinear(image, rw, rh);
  const size_t plane = static_cast<size_t>(in.height) * in.width;
  in.data.assign(plane * 3, 0.0f);
  for (int c = 0; c < 3; ++c) {
    float* dst = in.data.data() + plane * c;
    for (int y = 0; y < rh; ++y) {
      for (int x = 0; x < rw; ++x) {
        dst[static_cast<size_t>(y) * in.width + x] =
            (resized[(static_cast<size_t>(y) * rw + x) * 3 + c] / 255.0f - kDetMean[c]) / kDetStd[c];
      }
    }
  }
  return in;
}

Quad MinAreaRect(const std::vector<PointF>& points, double* short_side) {
  const std::vector<PointF> hull = ConvexHull(points);
  *short_side = 0;
  if (hull.size() < 3) {
    const PointF a = hull.empty() ? PointF{} : hull.front(), b = hull.empty() ? PointF{} : hull.back();
    return OrderCorners({a, b, b, a});
  }
  double best_area = std::numeric_limits<double>::infinity();
  std::array<PointF, 4> best{};
  double best_short = 0;
  for (size_t i = 0; i < hull.size(); ++i) {
    const PointF& a = hull[i];
    const PointF& b = hull[(i + 1) % hull.size()];
    const double len = Dist(a, b);
    if (len == 0) continue;
    const double ux = (b.x - a.x) / len, uy = (b.y - a.y) / len;  // edge direction
    const double vx = -uy, vy = ux;                                 // normal
    double umin = 1e300, umax = -1e300, vmin = 1e300, vmax = -1e300;
    for (const PointF& p : hull) {
      const double pu = (p.x - a.x) * ux + (p.y - a.y) * uy;
      const double pv = (p.x - a.x) * vx + (p.y - a.y) * vy;
      umin = std::min(umin, pu), umax = std::max(umax, pu);
      vmin = std::min(vmin, pv), vmax = std::max(vmax, pv);
    }
    const double area = (umax - umin) * (vmax - vmin);
    if (area < best_area) {
      best_area = area;
      best_short = std::min(umax - umin, vmax - vmin);
      auto at = [&](double pu, double pv) { return PointF{a.x + pu * ux + pv * vx, a.y + pu * uy + pv * vy}; };
      best = {at(umin, vmin), at(umax, vmin), at(umax, vmax), at(umin, vmax)};
    }
  }
  *short_side = best_short;
  return OrderCorners(best);
}

void SortBoxes(std::vector<DetBox>& boxes) {
  std::stable_sort(boxes.begin(), boxes.end(), [](const DetBox& a, const DetBox& b) {
    return a.box[0].y < b.box[0].y || (a.box[0].y == b.box[0].y && a.box[0].x < b.box[0].x);
  });
  for (size_t i = 0; i + 1 < boxes.size(); ++i) {
    for (size_t j = i + 1; j-- > 0;) {
      if (std::abs(boxes[j + 1].box[0].y - boxes[j].box[0].y) < 10 && boxes[j + 1].box[0].x < boxes[j].box[0].x) {
        std::swap(boxes[j], boxes[j + 1]);
      } else {
        break;
      }
    }
  }
}

StatusOr<std::vector<DetBox>> DbPostprocess(const float* prob, int map_height, int map_width, int valid_height,
                                            int valid_width, int image_width, int image_height,
                                            const DbOptions& options) {
  if (prob == nullptr || map_height <= 0 || map_width <= 0 || valid_height <= 0 || valid_width <= 0 ||
      valid_height > map_height || valid_width > map_width || image_width <= 0 || image_height <= 0) {
    return InvalidArgument(StrFormat("DB post-processing: invalid sizes (map %dx%d, valid %dx%d, image %dx%d)", map_height,
                                     map_width, valid_height, valid_width, image_height, image_width));
  }
  const int h = valid_height, w = valid_width;
  // 8-connected components of the thresholded map; -1 = background, -2 = unvisited text.
  std::vector<int> label(static_cast<size_t>(h) * w, -1);
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      if (prob[static_cast<size_t>(y) * map_width + x] > options.threshold) label[static_cast<size_t>(y) * w + x] = -2;
    }
  }
  std::vector<DetBox> boxes;
  std::vector<int> stack;
  int components = 0;
  for (int sy = 0; sy < h && components < options.max_candidates; ++sy) {
    for (int sx = 0; sx < w && components < options.max_candidates; ++sx) {
      if (label[static_cast<size_t>(sy) * w + sx] != -2) continue;
      const int id = components++;
      // Row extremes are enough for the convex hull.
      std::vector<int> row_min(h, w), row_max(h, -1);
      double prob_sum = 0;
      size_t pixels = 0;
      stack.assign(1, sy * w + sx);
      label[static_cast<size_t>(sy) * w + sx] = id;
      while (!stack.empty()) {
        const int idx = stack.back();
        stack.pop_back();
        const int x = idx % w, y = idx / w;
        row_min[y] = std::min(row_min[y], x), row_max[y] = std::max(row_max[y], x);
        prob_sum += prob[static_cast<size_t>(y) * map_width + x];
        ++pixels;
        for (int dy = -1; dy <= 1; ++dy) {
          for (int dx = -1; dx <= 1; ++dx) {
            const int nx = x + dx, ny = y + dy;
            if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
            int& l = label[static_cast<size_t>(ny) * w + nx];
            if (l != -2) continue;
            l = id;
            stack.push_back(ny * w + nx);
          }
        }
      }
      std::vector<PointF> pts;
      for (int y = 0; y < h; ++y) {
        if (row_max[y] < 0) continue;
        pts.push_back({static_cast<double>(row_min[y]), static_cast<double>(y)});
        if (row_max[y] != row_min[y]) pts.push_back({static_cast<double>(row_max[y]), static_cast<double>(y)});
      }
      double sside = 0;
      const Quad rect = MinAreaRect(pts, &sside);
      if (sside < options.min_size) continue;
      const float score = options.score_mode == DbScoreMode::kComponent ? static_cast<float>(prob_sum / pixels)
                                                                         : BoxScore(prob, map_width, h, w, rect);
      if (score < options.box_threshold) continue;
      // Unclip: for a rectangle, the rounded offset polygon's minimum-area
      // rectangle is the rectangle grown by the offset distance on every side.
      const double rw = Dist(rect[0], rect[1]), rh = Dist(rect[0], rect[3]);
      const double d = rw * rh * options.unclip_ratio / (2 * (rw + rh));
      const PointF u{(rect[1].x - rect[0].x) / rw, (rect[1].y - rect[0].y) / rw};
      const PointF v{(rect[3].x - rect[0].x) / rh, (rect[3].y - rect[0].y) / rh};
      auto grow = [&](const PointF& p, double su, double sv) {
        return PointF{p.x + d * (su * u.x + sv * v.x), p.y + d * (su * u.y + sv * v.y)};
      };
      const std::vector<PointF> grown = {grow(rect[0], -1, -1), grow(rect[1], 1, -1), grow(rect[2], 1, 1), grow(rect[3], -1, 1)};
      double gside = 0;
      Quad box = MinAreaRect(grown, &gside);
      if (gside < options.min_size + 2) continue;
      for (PointF& p : box) {
        p.x = std::clamp(std::round(p.x * image_width / w), 0.0, static_cast<double>(image_width));
        p.y = std::clamp(std::round(p.y * image_height / h), 0.0, static_cast<double>(image_height));
      }
      boxes.push_back(DetBox{box, score});
    }
  }
  SortBoxes(boxes);
  return boxes;
}

int RecContentWidth(double line_width, double line_height, const RecInputOptions& options) {
  return std::clamp(static_cast<int>(std::ceil(options.height * line_width / line_height)), 1, options.max_width);
}

int RecTensorWidth(int content_width, const RecInputOptions& options) {
  const int m = options.width_multiple;
  const int w = (content_width + m - 1) / m * m;
  return std::min(std::max(w, options.min_width), options.max_width);
}

StatusOr<RecInput> PrepareRecInput(const Image& image, const Quad& box, const RecInputOptions& options) {
  if (options.height < 1 || options.min_width < 1 || options.max_width < options.min_width || options.width_multiple < 1) {
    return InvalidArgument(StrFormat("recognition input: height %d, widths [%d, %d], multiple of %d: expected height >= 1, "
                                     "1 <= min_width <= max_width, width_multiple >= 1",
                                     options.height, options.min_width, options.max_width, options.width_multiple));
  }
  // The crop rectangle (PP-OCR's get_rotate_crop_image).
  const double cw = std::max(1.0, std::floor(std::max(Dist(box[0], box[1]), Dist(box[2], box[3]))));
  const double ch = std::max(1.0, std::floor(std::max(Dist(box[0], box[3]), Dist(box[1], box[2]))));
  const bool rotate = ch / cw >= 1.5;
  const double line_w = rotate ? ch : cw, line_h = rotate ? cw : ch;
  const int out_h = options.height;
  const int out_w = RecContentWidth(line_w, line_h, options);
  RecInput in;
  in.content_width = out_w;
  in.width = RecTensorWidth(out_w, options);
  const int stride = in.width;  // tensor row length
  in.data.assign(static_cast<size_t>(3) * out_h * stride, 0.0f);
  std::vector<float>& out = in.data;
  // Unit square -> quad projective map (Heckbert): (u, v) in [0,1]^2 with
  // (0,0)->box[0], (1,0)->box[1], (1,1)->box[2], (0,1)->box[3].
  const double x0 = box[0].x, y0 = box[0].y, x1 = box[1].x, y1 = box[1].y;
  const double x2 = box[2].x, y2 = box[2].y, x3 = box[3].x, y3 = box[3].y;
  const double dx1 = x1 - x2, dx2 = x3 - x2, dx3 = x0 - x1 + x2 - x3;
  const double dy1 = y1 - y2, dy2 = y3 - y2, dy3 = y0 - y1 + y2 - y3;
  double g = 0, hh = 0;
  const double den = dx1 * dy2 - dx2 * dy1;
  if ((std::abs(dx3) > 1e-9 || std::abs(dy3) > 1e-9) && std::abs(den) > 1e-12) {
    g = (dx3 * dy2 - dx2 * dy3) / den;
    hh = (dx1 * dy3 - dx3 * dy1) / den;
  }
  const double a = x1 - x0 + g * x1, b = x3 - x0 + hh * x3, c = x0;
  const double d = y1 - y0 + g * y1, e = y3 - y0 + hh * y3, f = y0;
  const size_t plane = static_cast<size_t>(out_h) * stride;
  for (int y = 0; y < out_h; ++y) {
    for (int x = 0; x < out_w; ++x) {
      // Line-image pixel -> crop pixel (resize with half-pixel centres) ->
      // crop before rotation -> source image.
      const double lx = (x + 0.5) * line_w / out_w - 0.5, ly = (y + 0.5) * line_h / out_h - 0.5;
      const double cx = rotate ? cw - 1 - ly : lx, cy = rotate ? lx : ly;
      const double u = cx / cw, v = cy / ch;
      const double wden = g * u + hh * v + 1;
      float rgb[3];
      SampleBilinear(image, (a * u + b * v + c) / wden, (d * u + e * v + f) / wden, rgb);
      for (int k = 0; k < 3; ++k) out[plane * k + static_cast<size_t>(y) * stride + x] = (rgb[k] / 255.0f - 0.5f) / 0.5f;
    }
  }
  return in;
}

StatusOr<Charset> LoadCharset(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound(path + ": cannot open the recognition keys file: " + std::strerror(errno));
  Charset cs;
  cs.symbols.emplace_back();
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    cs.symbols.push_back(line);
  }
  if (cs.symbols.size() == 1) return DataLoss(path + ": the recognition keys file is empty");
  cs.symbols.emplace_back(" ");
  return cs;
}

StatusOr<Decoded> CtcGreedyDecode(const float* probs, int steps, int classes, const Charset& charset) {
  if (classes != static_cast<int>(charset.symbols.size())) {
    return InvalidArgument(StrFormat("CTC decode: the model gives %d classes but the keys file makes %zu (blank + keys + space)",
                                     classes, charset.symbols.size()));
  }
  Decoded out;
  double sum = 0;
  int n = 0, prev = -1;
  for (int t = 0; t < steps; ++t) {
    const float* row = probs + static_cast<size_t>(t) * classes;
    const int best = static_cast<int>(std::max_element(row, row + classes) - row);
    if (best != 0 && best != prev) {
      out.text += charset.symbols[best];
      sum += row[best];
      ++n;
    }
    prev = best;
  }
  out.score = n ? static_cast<float>(sum / n) : 0.0f;
  return out;
}

}  // namespace oaaxvk::ocr
