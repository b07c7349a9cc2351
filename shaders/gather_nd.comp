#version 450
#extension GL_GOOGLE_include_directive : require
// GatherND: X viewed as [BATCH, KD[0..K-1], SLICE], I as [BATCH, MROWS, K]
// (int32 tuples, negative entries count from the end), Y as
// [BATCH, MROWS, SLICE]. KD holds the K indexed extents (unused entries 1),
// KS their strides in X (in elements). Tuples with an out-of-range entry
// yield 0 (never read outside X). 32-bit words.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) readonly buffer I_ { int idx[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint K = 1;
layout(constant_id = 2) const uint MROWS = 1;
layout(constant_id = 3) const uint SLICE = 1;
layout(constant_id = 4) const uint BSTRIDE = 1;  // prod(KD) * SLICE
layout(constant_id = 5) const uint KD0 = 1;
layout(constant_id = 6) const uint KD1 = 1;
layout(constant_id = 7) const uint KD2 = 1;
layout(constant_id = 8) const uint KD3 = 1;
layout(constant_id = 9) const uint KD4 = 1;
layout(constant_id = 10) const uint KD5 = 1;
layout(constant_id = 11) const uint KS0 = 0;
layout(constant_id = 12) const uint KS1 = 0;
layout(constant_id = 13) const uint KS2 = 0;
layout(constant_id = 14) const uint KS3 = 0;
layout(constant_id = 15) const uint KS4 = 0;
layout(constant_id = 16) const uint KS5 = 0;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint kd[6] = uint[6](KD0, KD1, KD2, KD3, KD4, KD5);
  uint ks[6] = uint[6](KS0, KS1, KS2, KS3, KS4, KS5);
  uint s = i % SLICE;
  uint row = i / SLICE;  // b * MROWS + m
  uint b = row / MROWS;
  uint off = b * BSTRIDE + s;
  for (uint t = 0u; t < K; ++t) {
    int j = idx[row * K + t];
    if (j < 0) j += int(kd[t]);
    if (j < 0 || j >= int(kd[t])) { y[i] = 0u; return; }
    off += uint(j) * ks[t];
  }
  y[i] = x[off];
}
