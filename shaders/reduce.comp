#version 450
#extension GL_GOOGLE_include_directive : require
// Reduce* over any set of axes (rank <= 6): one invocation per output element
// walks the reduced elements. The kept dimensions (output order) and the
// reduced dimensions are each right-aligned in 6 slots (unused: dim 1,
// stride 0); strides are input element strides.
// OP: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 L1, 6 L2, 7 log-sum,
//     8 log-sum-exp, 9 sum of squares.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint N = 1;       // output numel
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint RCOUNT = 1;  // reduced elements per output
layout(constant_id = 3) const uint K0 = 1;
layout(constant_id = 4) const uint K1 = 1;
layout(constant_id = 5) const uint K2 = 1;
layout(constant_id = 6) const uint K3 = 1;
layout(constant_id = 7) const uint K4 = 1;
layout(constant_id = 8) const uint K5 = 1;
layout(constant_id = 9) const uint KS0 = 0;
layout(constant_id = 10) const uint KS1 = 0;
layout(constant_id = 11) const uint KS2 = 0;
layout(constant_id = 12) const uint KS3 = 0;
layout(constant_id = 13) const uint KS4 = 0;
layout(constant_id = 14) const uint KS5 = 0;
layout(constant_id = 15) const uint R0 = 1;
layout(constant_id = 16) const uint R1 = 1;
layout(constant_id = 17) const uint R2 = 1;
layout(constant_id = 18) const uint R3 = 1;
layout(constant_id = 19) const uint R4 = 1;
layout(constant_id = 20) const uint R5 = 1;
layout(constant_id = 21) const uint RS0 = 0;
layout(constant_id = 22) const uint RS1 = 0;
layout(constant_id = 23) const uint RS2 = 0;
layout(constant_id = 24) const uint RS3 = 0;
layout(constant_id = 25) const uint RS4 = 0;
layout(constant_id = 26) const uint RS5 = 0;
#include "common.glsl"

uint reduced_offset(uint r) {
  uint off = 0u;
  off += (r % R5) * RS5; r /= R5;
  off += (r % R4) * RS4; r /= R4;
  off += (r % R3) * RS3; r /= R3;
  off += (r % R2) * RS2; r /= R2;
  off += (r % R1) * RS1; r /= R1;
  off += r * RS0;
  return off;
}

void main() {
  uint o = linear_index_256();
  if (o >= N) return;
  uint r = o, base = 0u;
  base += (r % K5) * KS5; r /= K5;
  base += (r % K4) * KS4; r /= K4;
  base += (r % K3) * KS3; r /= K3;
  base += (r % K2) * KS2; r /= K2;
  base += (r % K1) * KS1; r /= K1;
  base += r * KS0;
  float acc;
  if (OP == 2u || OP == 8u) {
    acc = x[base + reduced_offset(0u)];
    for (uint i = 1u; i < RCOUNT; ++i) acc = max(acc, x[base + reduced_offset(i)]);
    if (OP == 8u) {
      float m = acc, s = 0.0;
      if (!isinf(m))
        for (uint i = 0u; i < RCOUNT; ++i) s += exp(x[base + reduced_offset(i)] - m);
      acc = isinf(m) ? m : m + log(s);
    }
  } else if (OP == 3u) {
    acc = x[base + reduced_offset(0u)];
    for (uint i = 1u; i < RCOUNT; ++i) acc = min(acc, x[base + reduced_offset(i)]);
  } else if (OP == 4u) {
    acc = 1.0;
    for (uint i = 0u; i < RCOUNT; ++i) acc *= x[base + reduced_offset(i)];
  } else {
    acc = 0.0;
    for (uint i = 0u; i < RCOUNT; ++i) {
      float v = x[base + reduced_offset(i)];
      acc += OP == 5u ? abs(v) : ((OP == 6u || OP == 9u) ? v * v : v);
    }
    if (OP == 1u) acc /= float(RCOUNT);
    else if (OP == 6u) acc = sqrt(acc);
    else if (OP == 7u) acc = log(acc);
  }
  y[o] = acc;
}
