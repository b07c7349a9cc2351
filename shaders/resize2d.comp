#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX Resize on the two innermost dimensions of X viewed as [PLANES, IH, IW]
// (outer scales must be 1): nearest (with its rounding mode) or linear
// (bilinear). Coordinates per coordinate_transformation_mode, with the scale
// factors SH/SW (given scales, or out/in when `sizes` were given).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint PLANES = 1;
layout(constant_id = 1) const uint IH = 1;
layout(constant_id = 2) const uint IW = 1;
layout(constant_id = 3) const uint OH = 1;
layout(constant_id = 4) const uint OW = 1;
layout(constant_id = 5) const float SH = 1.0;
layout(constant_id = 6) const float SW = 1.0;
// 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel, 4 tf_half_pixel_for_nearest
layout(constant_id = 7) const uint COORD = 0;
layout(constant_id = 8) const uint MODE = 0;     // 0 nearest, 1 linear
// nearest: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
layout(constant_id = 9) const uint NEAREST = 0;
#include "common.glsl"

float src_coord(float o, float scale, uint in_len, uint out_len) {
  if (COORD == 1u) return o / scale;
  if (COORD == 2u) return out_len == 1u ? 0.0 : o * float(in_len - 1u) / float(out_len - 1u);
  if (COORD == 3u) return out_len == 1u ? 0.0 : (o + 0.5) / scale - 0.5;
  if (COORD == 4u) return (o + 0.5) / scale;
  return (o + 0.5) / scale - 0.5;
}

int nearest_index(float c, uint len) {
  float r;
  if (NEAREST == 0u) r = (fract(c) == 0.5) ? floor(c) : round(c);
  else if (NEAREST == 1u) r = (fract(c) == 0.5) ? ceil(c) : round(c);
  else if (NEAREST == 2u) r = floor(c);
  else r = ceil(c);
  return clamp(int(r), 0, int(len) - 1);
}

void main() {
  uint i = linear_index_256();
  if (i >= PLANES * OH * OW) return;
  uint ox = i % OW;
  uint oy = (i / OW) % OH;
  uint p = i / (OW * OH);
  float cy = src_coord(float(oy), SH, IH, OH);
  float cx = src_coord(float(ox), SW, IW, OW);
  uint base = p * IH * IW;
  if (MODE == 0u) {
    y[i] = x[base + uint(nearest_index(cy, IH)) * IW + uint(nearest_index(cx, IW))];
    return;
  }
  cy = clamp(cy, 0.0, float(IH - 1u));
  cx = clamp(cx, 0.0, float(IW - 1u));
  uint y0 = uint(floor(cy)), x0 = uint(floor(cx));
  uint y1 = min(y0 + 1u, IH - 1u), x1 = min(x0 + 1u, IW - 1u);
  float fy = cy - float(y0), fx = cx - float(x0);
  float top = mix(x[base + y0 * IW + x0], x[base + y0 * IW + x1], fx);
  float bot = mix(x[base + y1 * IW + x0], x[base + y1 * IW + x1], fx);
  y[i] = mix(top, bot, fy);
}
