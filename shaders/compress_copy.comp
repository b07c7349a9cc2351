#version 450
#extension GL_GOOGLE_include_directive : require
// Compress with a condition read at run time, second dispatch: X viewed as
// [OUTER, D, INNER] 32-bit words, SLOT[j] the output slot of position j
// (-1: not selected; written by compress.comp for j < min(D, COND_LEN)).
// One invocation per element of X copies a selected one to
// Y[o, SLOT[j], i]; no loops and no barriers (a barrier anywhere in a shader
// makes SwiftShader run it as coroutines, many times slower).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { uint y[]; };
layout(set = 0, binding = 2) readonly buffer S_ { int slot[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint D = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint COND_LEN = 1;
#include "common.glsl"
void main() {
  const uint e = linear_index_256();
  if (e >= OUTER * D * INNER) return;
  const uint i = e % INNER, j = (e / INNER) % D, o = e / (INNER * D);
  const int s = j < min(D, COND_LEN) ? slot[j] : -1;
  if (s >= 0) y[(o * D + uint(s)) * INNER + i] = x[e];
}
