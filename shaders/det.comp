#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX Det: the determinant of each of the BATCH square matrices [N, N] of X
// (N <= 16), by Gaussian elimination with partial pivoting in registers;
// one invocation per matrix.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint BATCH = 1;
layout(constant_id = 1) const uint N = 1;
#include "exact_math.glsl"

void main() {
  uint m = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
  if (m >= BATCH) return;
  float a[256];
  uint base = m * N * N;
  for (uint i = 0u; i < N * N; ++i) a[i] = x[base + i];
  float det = 1.0;
  for (uint c = 0u; c < N; ++c) {
    uint p = c;
    float best = abs(a[c * N + c]);
    for (uint r = c + 1u; r < N; ++r) {
      float v = abs(a[r * N + c]);
      if (v > best) { best = v; p = r; }
    }
    if (best == 0.0) { det = 0.0; break; }
    if (p != c) {
      for (uint k = 0u; k < N; ++k) { float t = a[c * N + k]; a[c * N + k] = a[p * N + k]; a[p * N + k] = t; }
      det = -det;
    }
    float piv = a[c * N + c];
    det *= piv;
    // Rounded as ONNX Runtime's elimination is (a correctly rounded factor,
    // then a product and a difference each rounded; `precise` forbids the
    // fma a driver may form): a fused update leaves a nonzero residue where
    // a singular matrix must reach an exact zero pivot.
    for (uint r = c + 1u; r < N; ++r) {
      const float f = div_rn(a[r * N + c], piv);
      for (uint k = c + 1u; k < N; ++k) {
        precise const float p = f * a[c * N + k];
        precise const float d = a[r * N + k] - p;
        a[r * N + k] = d;
      }
    }
  }
  y[m] = det;
}
