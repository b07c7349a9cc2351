#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX GridSample (opset 16) on 4-D X [N, C, IH, IW] with grid [N, OH, OW, 2]
// holding normalized (x, y) in [-1, 1]; Y [N, C, OH, OW]. Modes bilinear,
// nearest (round half to even) and bicubic (A = -0.75); padding zeros,
// border or reflection; align_corners 0/1. Matches the PyTorch grid_sample
// semantics the ONNX operator is defined by: bilinear and nearest apply the
// padding mode to the source coordinate, bicubic to each of its 4x4 taps;
// with zeros padding, taps outside the input read 0.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer G_ { float grid[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint IH = 1;
layout(constant_id = 3) const uint IW = 1;
layout(constant_id = 4) const uint OH = 1;
layout(constant_id = 5) const uint OW = 1;
layout(constant_id = 6) const uint MODE = 0;     // 0 bilinear, 1 nearest, 2 bicubic
layout(constant_id = 7) const uint PADDING = 0;  // 0 zeros, 1 border, 2 reflection
layout(constant_id = 8) const uint ALIGN_CORNERS = 0;
#include "common.glsl"

#include "grid_sample_coords.glsl"

float tap(uint base, int r, int c) {
  if (r < 0 || c < 0 || r >= int(IH) || c >= int(IW)) return 0.0;
  return x[base + uint(r) * IW + uint(c)];
}

float cubic_tap(uint base, int r, int c) {
  // bicubic: the padding mode applies to every tap coordinate.
  float pr = pad_coord(float(r), IH), pc = pad_coord(float(c), IW);
  return tap(base, int(pr), int(pc));
}

vec4 cubic_weights(float t) {
  const float A = -0.75;
  float s0 = t + 1.0, s1 = t, s2 = 1.0 - t, s3 = 2.0 - t;
  return vec4(((A * s0 - 5.0 * A) * s0 + 8.0 * A) * s0 - 4.0 * A, ((A + 2.0) * s1 - (A + 3.0)) * s1 * s1 + 1.0,
              ((A + 2.0) * s2 - (A + 3.0)) * s2 * s2 + 1.0, ((A * s3 - 5.0 * A) * s3 + 8.0 * A) * s3 - 4.0 * A);
}

void main() {
  uint i = linear_index_256();
  if (i >= N * C * OH * OW) return;
  uint ow = i % OW;
  uint oh = (i / OW) % OH;
  uint c = (i / (OW * OH)) % C;
  uint n = i / (OW * OH * C);
  uint g = ((n * OH + oh) * OW + ow) * 2u;
  float ix = unnormalize(grid[g], IW);
  float iy = unnormalize(grid[g + 1u], IH);
  uint base = (n * C + c) * IH * IW;
  if (MODE == 2u) {
    float fx = floor(ix), fy = floor(iy);
    vec4 wx = cubic_weights(ix - fx), wy = cubic_weights(iy - fy);
    int x0 = int(fx) - 1, y0 = int(fy) - 1;
    float acc = 0.0;
    for (int r = 0; r < 4; ++r) {
      vec4 row = vec4(cubic_tap(base, y0 + r, x0), cubic_tap(base, y0 + r, x0 + 1), cubic_tap(base, y0 + r, x0 + 2),
                      cubic_tap(base, y0 + r, x0 + 3));
      acc += wy[r] * dot(wx, row);
    }
    y[i] = acc;
    return;
  }
  ix = pad_coord(ix, IW);
  iy = pad_coord(iy, IH);
  if (MODE == 1u) {
    y[i] = tap(base, int(roundEven(iy)), int(roundEven(ix)));
    return;
  }
  float fx = floor(ix), fy = floor(iy);
  float tx = ix - fx, ty = iy - fy;
  int x0 = int(fx), y0 = int(fy);
  float top = tap(base, y0, x0) * (1.0 - tx) + tap(base, y0, x0 + 1) * tx;
  float bot = tap(base, y0 + 1, x0) * (1.0 - tx) + tap(base, y0 + 1, x0 + 1) * tx;
  y[i] = top * (1.0 - ty) + bot * ty;
}
