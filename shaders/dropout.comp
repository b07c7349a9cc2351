#version 450
#extension GL_GOOGLE_include_directive : require
// Dropout with training_mode and ratio read at run time (one float32 word
// each at bindings 1 and 2, training_mode as int32): in training mode with
// ratio r > 0, element i is kept when u(i) >= r, where u(i) in [0, 1) is a
// hash of (SEED, i) (the same draw at every inference of a bundle: a
// deterministic generator, not numpy's), and a kept element is scaled by
// 1 / (1 - r); otherwise Y = X. MASK (int32 0/1, the bool mask) marks the
// kept elements. One invocation per element.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer R_ { float ratio[]; };
layout(set = 0, binding = 2) readonly buffer T_ { int training[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 4) writeonly buffer M_ { int mask[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint SEED = 0;
#include "common.glsl"
// A 32-bit integer hash (the "lowbias32" mixer): well spread low and high bits.
uint mix32(uint v) {
  v ^= v >> 16; v *= 0x7feb352du;
  v ^= v >> 15; v *= 0x846ca68bu;
  v ^= v >> 16;
  return v;
}
void main() {
  const uint i = linear_index_256();
  if (i >= N) return;
  const float r = ratio[0];
  const bool drop = training[0] != 0 && r > 0.0;
  bool keep = true;
  if (drop) keep = float(mix32(i ^ mix32(SEED + 0x9e3779b9u)) >> 8) * (1.0 / 16777216.0) >= r;
  y[i] = keep ? (drop ? x[i] / (1.0 - r) : x[i]) : 0.0;
  mask[i] = keep ? 1 : 0;
}
