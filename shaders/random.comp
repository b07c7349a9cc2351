#version 450
#extension GL_GOOGLE_include_directive : require
// RandomUniformLike / RandomNormalLike (and Bernoulli, decomposed into a
// uniform draw and a comparison): Y[i] for i < N drawn from a counter-based
// generator, a hash of (SEED, i): the same draw at every inference of a
// bundle and on every device, not numpy's or ONNX Runtime's stream.
//   DIST 0: uniform in [A, B) (low, high): A + (B - A) * u, u = 24 random bits
//           / 2^24 in [0, 1)
//   DIST 1: normal with mean A and standard deviation B (Box-Muller on two
//           independent uniforms, the first in (0, 1] so its log is finite)
// Binding 0 (the shape-giving input) is bound but not read.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint SEED = 0;
layout(constant_id = 2) const uint DIST = 0;
layout(constant_id = 3) const float A = 0.0;
layout(constant_id = 4) const float B = 1.0;
#include "common.glsl"

// A 32-bit integer hash (the "lowbias32" mixer, as dropout.comp).
uint mix32(uint v) {
  v ^= v >> 16; v *= 0x7feb352du;
  v ^= v >> 15; v *= 0x846ca68bu;
  v ^= v >> 16;
  return v;
}

// 24 random bits of stream `s` at counter i, as a float in [0, 1).
float uniform01(uint i, uint s) { return float(mix32(i ^ mix32(SEED + s)) >> 8) * (1.0 / 16777216.0); }

void main() {
  const uint i = linear_index_256();
  if (i >= N) return;
  if (DIST == 0u) {
    y[i] = A + (B - A) * uniform01(i, 0x9e3779b9u);
    return;
  }
  const float u1 = 1.0 - uniform01(i, 0x3c6ef372u);  // (0, 1]
  const float u2 = uniform01(i, 0xdaa66d2bu);
  // The angle in [-pi, pi), where every driver's cos is within its bound.
  y[i] = A + B * sqrt(-2.0 * log(u1)) * cos(3.14159265 * (2.0 * u2 - 1.0));
}
