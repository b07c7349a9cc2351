#version 450
#extension GL_GOOGLE_include_directive : require
// ArgMax / ArgMin along one axis: X viewed as [OUTER, K, INNER] (float32 when
// IN_FLOAT = 1, else int32), Y[o, in] = int32 index of the first (or, with
// SELECT_LAST = 1, the last) extreme element. One invocation per output.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { int y[]; };
layout(constant_id = 0) const uint N = 1;  // OUTER * INNER
layout(constant_id = 1) const uint K = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint IS_MAX = 1;
layout(constant_id = 4) const uint SELECT_LAST = 0;
layout(constant_id = 5) const uint IN_FLOAT = 1;
#include "common.glsl"
bool better(uint cand, uint best) {
  if (IN_FLOAT == 1u) {
    float c = uintBitsToFloat(cand), b = uintBitsToFloat(best);
    return SELECT_LAST == 1u ? (IS_MAX == 1u ? c >= b : c <= b) : (IS_MAX == 1u ? c > b : c < b);
  }
  int c = int(cand), b = int(best);
  return SELECT_LAST == 1u ? (IS_MAX == 1u ? c >= b : c <= b) : (IS_MAX == 1u ? c > b : c < b);
}
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint in_ = i % INNER, o = i / INNER;
  uint base = o * K * INNER + in_;
  uint best = x[base];
  int bi = 0;
  for (uint k = 1u; k < K; ++k) {
    uint v = x[base + k * INNER];
    if (better(v, best)) { best = v; bi = int(k); }
  }
  y[i] = bi;
}
