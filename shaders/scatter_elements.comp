#version 450
#extension GL_GOOGLE_include_directive : require
// ScatterElements / Scatter, second of two dispatches (the first copies the
// data into Y): deterministic, no atomics. I and U share the shape ID (6 dims,
// right-aligned, dense); data/Y have the shape D. One invocation per position
// of I with its AXIS coordinate left out (ROWS = numel(I) / ID[AXIS]); it
// walks that line of I in increasing AXIS order and applies U[u] to
// Y[u with the AXIS coordinate replaced by I[u]] (negative indices count from
// the end; out-of-range ones are skipped): REDUCTION 0 none (last wins),
// 1 add, 2 mul, 3 max, 4 min. Distinct invocations touch distinct elements of
// Y (they differ off AXIS). IN_FLOAT: float32 arithmetic, else int32.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer I_ { int idx[]; };
layout(set = 0, binding = 1) readonly buffer U_ { uint upd[]; };
layout(set = 0, binding = 2) buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint ROWS = 1;
layout(constant_id = 1) const uint D0 = 1;
layout(constant_id = 2) const uint D1 = 1;
layout(constant_id = 3) const uint D2 = 1;
layout(constant_id = 4) const uint D3 = 1;
layout(constant_id = 5) const uint D4 = 1;
layout(constant_id = 6) const uint D5 = 1;
layout(constant_id = 7) const uint ID0 = 1;
layout(constant_id = 8) const uint ID1 = 1;
layout(constant_id = 9) const uint ID2 = 1;
layout(constant_id = 10) const uint ID3 = 1;
layout(constant_id = 11) const uint ID4 = 1;
layout(constant_id = 12) const uint ID5 = 1;
layout(constant_id = 13) const uint AXIS = 5;
layout(constant_id = 14) const uint REDUCTION = 0;
layout(constant_id = 15) const uint IN_FLOAT = 1;
#include "common.glsl"
#include "scatter_common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= ROWS) return;
  uint d[6] = uint[6](D0, D1, D2, D3, D4, D5);
  uint id[6] = uint[6](ID0, ID1, ID2, ID3, ID4, ID5);
  // Offsets (in I/U and in Y) of this line's position with AXIS coordinate 0.
  uint r = i, ubase = 0u, ustride = 1u, uax = 1u, ybase = 0u, ystride = 1u, yax = 1u;
  for (int k = 5; k >= 0; --k) {
    if (uint(k) == AXIS) {
      uax = ustride;
      yax = ystride;
    } else {
      uint c = r % id[k];
      r /= id[k];
      ubase += c * ustride;
      ybase += c * ystride;
    }
    ustride *= id[k];
    ystride *= d[k];
  }
  int kax = int(d[AXIS]);
  for (uint a = 0u; a < id[AXIS]; ++a) {
    uint u = ubase + a * uax;
    int j = idx[u];
    if (j < 0) j += kax;
    if (j < 0 || j >= kax) continue;
    uint o = ybase + uint(j) * yax;
    y[o] = scatter_apply(y[o], upd[u], REDUCTION, IN_FLOAT);
  }
}
