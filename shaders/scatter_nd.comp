#version 450
#extension GL_GOOGLE_include_directive : require
// ScatterND, second of two dispatches (the first copies the data into Y):
// deterministic, no atomics. Y viewed as [PREFIX (the K indexed dims KD),
// SLICE]; I as [MROWS, K] int32 tuples (negative entries count from the end);
// U as [MROWS, SLICE]. One invocation per slice offset s walks the tuples in
// order and applies U[r, s] to Y[tuple r, s] with REDUCTION (0 none: last
// wins, 1 add, 2 mul, 3 max, 4 min); tuples with an out-of-range entry are
// skipped. IN_FLOAT: float32 arithmetic, else int32.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer I_ { int idx[]; };
layout(set = 0, binding = 1) readonly buffer U_ { uint upd[]; };
layout(set = 0, binding = 2) buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint SLICE = 1;
layout(constant_id = 1) const uint K = 1;
layout(constant_id = 2) const uint MROWS = 1;
layout(constant_id = 3) const uint KD0 = 1;
layout(constant_id = 4) const uint KD1 = 1;
layout(constant_id = 5) const uint KD2 = 1;
layout(constant_id = 6) const uint KD3 = 1;
layout(constant_id = 7) const uint KD4 = 1;
layout(constant_id = 8) const uint KD5 = 1;
layout(constant_id = 9) const uint REDUCTION = 0;
layout(constant_id = 10) const uint IN_FLOAT = 1;
#include "common.glsl"
#include "scatter_common.glsl"
void main() {
  uint s = linear_index_256();
  if (s >= SLICE) return;
  uint kd[6] = uint[6](KD0, KD1, KD2, KD3, KD4, KD5);
  for (uint r = 0u; r < MROWS; ++r) {
    uint p = 0u;
    bool ok = true;
    for (uint t = 0u; t < K; ++t) {
      int j = idx[r * K + t];
      if (j < 0) j += int(kd[t]);
      if (j < 0 || j >= int(kd[t])) ok = false;
      p = p * kd[t] + uint(j);
    }
    if (!ok) continue;
    uint o = p * SLICE + s;
    y[o] = scatter_apply(y[o], upd[r * SLICE + s], REDUCTION, IN_FLOAT);
  }
}
