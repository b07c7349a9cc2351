#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX GridSample (opsets 20, 22) on 5-D X [N, C, ID, IH, IW] with grid
// [N, OD, OH, OW, 3] holding normalized (x, y, z) in [-1, 1]; Y [N, C, OD,
// OH, OW]. Modes trilinear (MODE 0) and nearest (1, round half to even);
// padding zeros, border or reflection (applied to the source coordinate, as
// in 2-D); align_corners 0/1. Taps outside the input read 0.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer G_ { float grid[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint ID = 1;
layout(constant_id = 3) const uint IH = 1;
layout(constant_id = 4) const uint IW = 1;
layout(constant_id = 5) const uint OD = 1;
layout(constant_id = 6) const uint OH = 1;
layout(constant_id = 7) const uint OW = 1;
layout(constant_id = 8) const uint MODE = 0;     // 0 trilinear, 1 nearest
layout(constant_id = 9) const uint PADDING = 0;  // 0 zeros, 1 border, 2 reflection
layout(constant_id = 10) const uint ALIGN_CORNERS = 0;
#include "common.glsl"

#include "grid_sample_coords.glsl"

float tap(uint base, int d, int r, int c) {
  if (d < 0 || r < 0 || c < 0 || d >= int(ID) || r >= int(IH) || c >= int(IW)) return 0.0;
  return x[base + (uint(d) * IH + uint(r)) * IW + uint(c)];
}

void main() {
  uint i = linear_index_256();
  if (i >= N * C * OD * OH * OW) return;
  uint ow = i % OW;
  uint oh = (i / OW) % OH;
  uint od = (i / (OW * OH)) % OD;
  uint c = (i / (OW * OH * OD)) % C;
  uint n = i / (OW * OH * OD * C);
  uint g = (((n * OD + od) * OH + oh) * OW + ow) * 3u;
  float ix = pad_coord(unnormalize(grid[g], IW), IW);
  float iy = pad_coord(unnormalize(grid[g + 1u], IH), IH);
  float iz = pad_coord(unnormalize(grid[g + 2u], ID), ID);
  uint base = (n * C + c) * ID * IH * IW;
  if (MODE == 1u) {
    y[i] = tap(base, int(roundEven(iz)), int(roundEven(iy)), int(roundEven(ix)));
    return;
  }
  float fx = floor(ix), fy = floor(iy), fz = floor(iz);
  float tx = ix - fx, ty = iy - fy, tz = iz - fz;
  int x0 = int(fx), y0 = int(fy), z0 = int(fz);
  float acc = 0.0;
  for (int dz = 0; dz < 2; ++dz) {
    float wz = dz == 0 ? 1.0 - tz : tz;
    float top = tap(base, z0 + dz, y0, x0) * (1.0 - tx) + tap(base, z0 + dz, y0, x0 + 1) * tx;
    float bot = tap(base, z0 + dz, y0 + 1, x0) * (1.0 - tx) + tap(base, z0 + dz, y0 + 1, x0 + 1) * tx;
    acc += (top * (1.0 - ty) + bot * ty) * wz;
  }
  y[i] = acc;
}
