// The antialiasing filter of Resize (antialias = 1, linear and cubic modes),
// included by resize2d.glsl when the kernel (resize2d_aa.comp) defines
// ANTIALIAS; it uses that file's src_coord and LOAD_X.
//
// Each resized axis is filtered separately, as ONNX Runtime does (its
// Pillow-derived filter): with the axis scale s (output / input), the filter
// is widened by 1 / s when downsampling. For output position o the source
// centre is c = src_coord(o) + 0.5; the taps are the integers
// t in [floor(c - support + 0.5), floor(c + support + 0.5)) with support =
// (1 linear, 2 cubic) * max(1 / s, 1), at most 2 * ceil(support) + 1 of them,
// each weighted by filter((t - c + 0.5) / max(1 / s, 1)) (linear: the triangle
// 1 - |x|; cubic: the Keys kernel with CUBIC_A) and normalized by the sum of
// the weights. A tap outside the input reads the nearest edge element (the
// ONNX definition's edge padding); with exclude_outside it is dropped and the
// sum is taken over the taps inside. An axis whose length is unchanged is
// copied. The width is filtered first, then the height, each sum in float,
// as ONNX Runtime's two passes round.

float aa_filter(float v) {
  v = abs(v);
  if (MODE == 1u) return v < 1.0 ? 1.0 - v : 0.0;
  const float A = CUBIC_A;
  if (v < 1.0) return ((A + 2.0) * v - (A + 3.0)) * v * v + 1.0;
  if (v < 2.0) return (((v - 5.0) * v + 8.0) * v - 4.0) * A;
  return 0.0;
}

// The taps of one axis: [first, first + count) and the normalizing sum.
struct AaWindow {
  int first;
  int count;
  float centre;
  float inv_scale;
  float total;
};

AaWindow aa_window(uint o, float coord, float scale, uint in_len) {
  AaWindow w;
  const float up = scale >= 1.0 ? 1.0 : div_rn(1.0, scale);  // 1 / min(s, 1)
  const float support = (MODE == 1u ? 1.0 : 2.0) * up;
  const int window = int(ceil(support)) * 2 + 1;
  w.centre = scale == 1.0 ? float(o) + 0.5 : coord + 0.5;
  w.inv_scale = div_rn(1.0, up);  // ONNX Runtime's 1 / (1 / s), not s itself
  int lo = int(floor(w.centre - support + 0.5)), hi = int(floor(w.centre + support + 0.5));
  hi = lo + clamp(hi - lo, 0, window);
  if (EXCLUDE_OUTSIDE != 0u) {
    lo = clamp(lo, 0, int(in_len));
    hi = clamp(hi, 0, int(in_len));
  }
  w.first = lo;
  w.count = max(hi - lo, 0);
  float total = 0.0;
  for (int k = 0; k < w.count; ++k) total += aa_filter((float(lo + k) - w.centre + 0.5) * w.inv_scale);
  w.total = total == 0.0 ? 1.0 : total;
  return w;
}

float aa_weight(AaWindow w, int k) { return aa_filter((float(w.first + k) - w.centre + 0.5) * w.inv_scale) / w.total; }

float resize_antialias(uint base, uint oy, uint ox, float sh, float sw, float cy, float cx) {
  const bool copy_w = OW == IW, copy_h = OH == IH;
  AaWindow wx = aa_window(ox, cx, sw, IW), wy = aa_window(oy, cy, sh, IH);
  if (copy_w) { wx.first = int(ox); wx.count = 1; }
  if (copy_h) { wy.first = int(oy); wy.count = 1; }
  float acc = 0.0;
  for (int r = 0; r < wy.count; ++r) {
    const uint row = uint(clamp(wy.first + r, 0, int(IH) - 1));
    float line = 0.0;
    for (int k = 0; k < wx.count; ++k) {
      const uint col = uint(clamp(wx.first + k, 0, int(IW) - 1));
      line += LOAD_X(base + row * IW + col) * (copy_w ? 1.0 : aa_weight(wx, k));
    }
    acc += line * (copy_h ? 1.0 : aa_weight(wy, r));
  }
  return acc;
}
