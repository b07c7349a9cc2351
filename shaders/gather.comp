#version 450
#extension GL_GOOGLE_include_directive : require
// Gather along one axis: data viewed as [OUTER, K, INNER], int32 indices of M
// elements (negative ones count from the end), output [OUTER, M, INNER].
// Out-of-range indices yield 0. Values are copied as 32-bit words.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) readonly buffer I_ { int idx[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint N = 1;      // output numel = OUTER * M * INNER
layout(constant_id = 1) const uint K = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint M = 1;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint in_ = i % INNER;
  uint m = (i / INNER) % M;
  uint o = i / (INNER * M);
  int j = idx[m];
  if (j < 0) j += int(K);
  y[i] = (j < 0 || j >= int(K)) ? 0u : x[(o * K + uint(j)) * INNER + in_];
}
