#version 450
#extension GL_GOOGLE_include_directive : require
// Where: Y[i] = C[c(i)] != 0 ? X[x(i)] : Z[z(i)] with numpy broadcasting
// (rank <= 6, right-aligned dims, element strides, 0 on broadcast dims).
// Values are copied as 32-bit words (any device data type).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer C_ { uint cnd[]; };
layout(set = 0, binding = 1) readonly buffer X_ { uint xv[]; };
layout(set = 0, binding = 2) readonly buffer Z_ { uint zv[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint D0 = 1;
layout(constant_id = 2) const uint D1 = 1;
layout(constant_id = 3) const uint D2 = 1;
layout(constant_id = 4) const uint D3 = 1;
layout(constant_id = 5) const uint D4 = 1;
layout(constant_id = 6) const uint D5 = 1;
layout(constant_id = 7) const uint SC0 = 0;
layout(constant_id = 8) const uint SC1 = 0;
layout(constant_id = 9) const uint SC2 = 0;
layout(constant_id = 10) const uint SC3 = 0;
layout(constant_id = 11) const uint SC4 = 0;
layout(constant_id = 12) const uint SC5 = 0;
layout(constant_id = 13) const uint SX0 = 0;
layout(constant_id = 14) const uint SX1 = 0;
layout(constant_id = 15) const uint SX2 = 0;
layout(constant_id = 16) const uint SX3 = 0;
layout(constant_id = 17) const uint SX4 = 0;
layout(constant_id = 18) const uint SX5 = 0;
layout(constant_id = 19) const uint SZ0 = 0;
layout(constant_id = 20) const uint SZ1 = 0;
layout(constant_id = 21) const uint SZ2 = 0;
layout(constant_id = 22) const uint SZ3 = 0;
layout(constant_id = 23) const uint SZ4 = 0;
layout(constant_id = 24) const uint SZ5 = 0;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint r = i;
  uint i5 = r % D5; r /= D5;
  uint i4 = r % D4; r /= D4;
  uint i3 = r % D3; r /= D3;
  uint i2 = r % D2; r /= D2;
  uint i1 = r % D1; r /= D1;
  uint i0 = r;
  uint ic = i0 * SC0 + i1 * SC1 + i2 * SC2 + i3 * SC3 + i4 * SC4 + i5 * SC5;
  uint ix = i0 * SX0 + i1 * SX1 + i2 * SX2 + i3 * SX3 + i4 * SX4 + i5 * SX5;
  uint iz = i0 * SZ0 + i1 * SZ1 + i2 * SZ2 + i3 * SZ3 + i4 * SZ4 + i5 * SZ5;
  y[i] = cnd[ic] != 0u ? xv[ix] : zv[iz];
}
