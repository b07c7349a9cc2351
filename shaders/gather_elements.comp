#version 450
#extension GL_GOOGLE_include_directive : require
// GatherElements: Y has the shape of the indices I (6 dims D, right-aligned);
// Y[c] = X[c with c[AXIS] replaced by I[c]]. X strides XS (6, 0 for padded
// dims); KAX = X's extent on AXIS. Negative indices count from the end;
// out-of-range indices yield 0 (never read outside X). 32-bit words.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) readonly buffer I_ { int idx[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint D0 = 1;
layout(constant_id = 2) const uint D1 = 1;
layout(constant_id = 3) const uint D2 = 1;
layout(constant_id = 4) const uint D3 = 1;
layout(constant_id = 5) const uint D4 = 1;
layout(constant_id = 6) const uint D5 = 1;
layout(constant_id = 7) const uint XS0 = 0;
layout(constant_id = 8) const uint XS1 = 0;
layout(constant_id = 9) const uint XS2 = 0;
layout(constant_id = 10) const uint XS3 = 0;
layout(constant_id = 11) const uint XS4 = 0;
layout(constant_id = 12) const uint XS5 = 0;
layout(constant_id = 13) const uint AXIS = 5;  // 0..5 in the 6-dim view
layout(constant_id = 14) const uint KAX = 1;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint d[6] = uint[6](D0, D1, D2, D3, D4, D5);
  uint s[6] = uint[6](XS0, XS1, XS2, XS3, XS4, XS5);
  int j = idx[i];
  if (j < 0) j += int(KAX);
  if (j < 0 || j >= int(KAX)) { y[i] = 0u; return; }
  uint r = i, off = 0u;
  for (int k = 5; k >= 0; --k) {
    uint c = r % d[k];
    r /= d[k];
    off += (uint(k) == AXIS ? uint(j) : c) * s[k];
  }
  y[i] = x[off];
}
