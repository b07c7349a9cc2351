#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX RoiAlign (opset 16): X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2 in
// input coordinates before spatial_scale), batch_indices [R] (int32 words);
// Y [R, C, OH, OW]. Each output bin averages (MODE 0) or takes the maximum
// (MODE 1) of GH x GW bilinear samples (GH/GW = sampling_ratio, or
// ceil(roi size / bins) when it is 0), with the border handling of ONNX
// Runtime's implementation: samples beyond one pixel outside the input
// contribute 0, others clamp to the edge; max mode takes the largest
// weighted corner value, as ONNX Runtime does.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer R_ { float rois[]; };
layout(set = 0, binding = 2) readonly buffer B_ { int batch_index[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint W = 1;
layout(constant_id = 4) const uint R = 1;
layout(constant_id = 5) const uint OH = 1;
layout(constant_id = 6) const uint OW = 1;
layout(constant_id = 7) const uint SAMPLING_RATIO = 0;
layout(constant_id = 8) const float SPATIAL_SCALE = 1.0;
layout(constant_id = 9) const uint HALF_PIXEL = 1;  // 1 half_pixel, 0 output_half_pixel
layout(constant_id = 10) const uint MODE = 0;       // 0 avg, 1 max
#include "common.glsl"

void main() {
  uint i = linear_index_256();
  if (i >= R * C * OH * OW) return;
  uint pw = i % OW;
  uint ph = (i / OW) % OH;
  uint c = (i / (OW * OH)) % C;
  uint r = i / (OW * OH * C);
  int bi = clamp(batch_index[r], 0, int(N) - 1);
  float off = HALF_PIXEL != 0u ? 0.5 : 0.0;
  // Sample positions in ONNX Runtime's order and roundings (correctly
  // rounded divisions, no fused multiply-adds), so that the grid size (a
  // ceiled quotient) and samples on pixel boundaries match it on any driver.
  precise const float x1 = rois[r * 4u] * SPATIAL_SCALE - off, y1 = rois[r * 4u + 1u] * SPATIAL_SCALE - off;
  precise const float x2 = rois[r * 4u + 2u] * SPATIAL_SCALE - off, y2 = rois[r * 4u + 3u] * SPATIAL_SCALE - off;
  precise float rw = x2 - x1, rh = y2 - y1;
  if (HALF_PIXEL == 0u) { rw = max(rw, 1.0); rh = max(rh, 1.0); }
  const float bh = div_rn(rh, float(OH)), bw = div_rn(rw, float(OW));
  uint gh = SAMPLING_RATIO > 0u ? SAMPLING_RATIO : uint(ceil(bh));
  uint gw = SAMPLING_RATIO > 0u ? SAMPLING_RATIO : uint(ceil(bw));
  uint base = (uint(bi) * C + c) * H * W;
  float acc = 0.0;
  bool first = true;
  for (uint iy = 0u; iy < gh; ++iy) {
    precise const float sy = y1 + float(ph) * bh + div_rn((float(iy) + 0.5) * bh, float(gh));
    for (uint ix = 0u; ix < gw; ++ix) {
      precise const float sx = x1 + float(pw) * bw + div_rn((float(ix) + 0.5) * bw, float(gw));
      vec4 w = vec4(0.0);
      uint yl = 0u, yh = 0u, xl = 0u, xh = 0u;
      if (!(sy < -1.0 || sy > float(H) || sx < -1.0 || sx > float(W))) {
        float yy = max(sy, 0.0), xx = max(sx, 0.0);
        yl = uint(yy); xl = uint(xx);
        if (yl >= H - 1u) { yl = yh = H - 1u; yy = float(yl); } else { yh = yl + 1u; }
        if (xl >= W - 1u) { xl = xh = W - 1u; xx = float(xl); } else { xh = xl + 1u; }
        float ly = yy - float(yl), lx = xx - float(xl);
        w = vec4((1.0 - ly) * (1.0 - lx), (1.0 - ly) * lx, ly * (1.0 - lx), ly * lx);
      }
      vec4 v = vec4(x[base + yl * W + xl], x[base + yl * W + xh], x[base + yh * W + xl], x[base + yh * W + xh]);
      if (MODE == 0u) {
        acc += dot(w, v);
      } else {
        vec4 p = w * v;
        float mx = max(max(p.x, p.y), max(p.z, p.w));
        acc = first ? mx : max(acc, mx);
        first = false;
      }
    }
  }
  if (MODE == 0u) acc /= float(max(gh * gw, 1u));
  y[i] = acc;
}
