#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax along one axis: X viewed as [OUTER, AXIS, INNER]; one 64-wide
// workgroup per (outer, inner) row. Single read pass with an online
// (running max, rescaled sum) per invocation, merged in shared memory, then
// one write pass.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint AXIS = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint MODE = 0;  // 0 Softmax, 1 LogSoftmax, 2 Hardmax (1 at the first maximum)
#include "common.glsl"
shared float smax[64];
shared float ssum[64];
shared uint sfirst;
void main() {
  uint row = linear_group();
  if (row >= OUTER * INNER) return;  // uniform per workgroup
  uint o = row / INNER, in_ = row % INNER;
  uint base = o * AXIS * INNER + in_;
  uint t = gl_LocalInvocationID.x;
  float m = -3.402823466e38, s = 0.0;
  for (uint k = t; k < AXIS; k += 64u) {
    float v = x[base + k * INNER];
    if (v > m) { s = s * exp(m - v) + 1.0; m = v; } else { s += exp(v - m); }
  }
  smax[t] = m; ssum[t] = s;
  barrier();
  for (uint w = 32u; w > 0u; w >>= 1u) {
    if (t < w) {
      float m1 = smax[t], m2 = smax[t + w];
      float mm = max(m1, m2);
      float s1 = ssum[t] == 0.0 ? 0.0 : ssum[t] * exp(m1 - mm);
      float s2 = ssum[t + w] == 0.0 ? 0.0 : ssum[t + w] * exp(m2 - mm);
      smax[t] = mm; ssum[t] = s1 + s2;
    }
    barrier();
  }
  float gm = smax[0], inv = 1.0 / ssum[0];
  if (MODE == 1u) {
    float lse = gm + log(ssum[0]);
    for (uint k = t; k < AXIS; k += 64u) y[base + k * INNER] = x[base + k * INNER] - lse;
  } else if (MODE == 2u) {
    if (t == 0u) {
      uint first = 0u;
      while (first + 1u < AXIS && x[base + first * INNER] != gm) ++first;
      sfirst = first;
    }
    barrier();
    uint f = sfirst;
    for (uint k = t; k < AXIS; k += 64u) y[base + k * INNER] = k == f ? 1.0 : 0.0;
  } else {
    for (uint k = t; k < AXIS; k += 64u) y[base + k * INNER] = exp(x[base + k * INNER] - gm) * inv;
  }
}
