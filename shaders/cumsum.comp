#version 450
#extension GL_GOOGLE_include_directive : require
// CumSum along one axis: X viewed as [OUTER, L, INNER]; one invocation per
// row (OUTER * INNER rows) scans its L elements sequentially (REVERSE: from the
// end), writing the running sum after (EXCLUSIVE: before) adding each element,
// so float results round exactly as a sequential scan. IN_FLOAT: float32,
// else int32 (wrapping). O(N) work in total.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint ROWS = 1;  // OUTER * INNER
layout(constant_id = 1) const uint L = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint EXCLUSIVE = 0;
layout(constant_id = 4) const uint REVERSE = 0;
layout(constant_id = 5) const uint IN_FLOAT = 1;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= ROWS) return;
  uint base = (i / INNER) * L * INNER + i % INNER;
  float fs = 0.0;
  int is_ = 0;
  for (uint t = 0u; t < L; ++t) {
    uint pos = base + (REVERSE == 0u ? t : L - 1u - t) * INNER;
    uint w = x[pos];
    if (EXCLUSIVE != 0u) y[pos] = IN_FLOAT != 0u ? floatBitsToUint(fs) : uint(is_);
    if (IN_FLOAT != 0u) fs += uintBitsToFloat(w); else is_ += int(w);
    if (EXCLUSIVE == 0u) y[pos] = IN_FLOAT != 0u ? floatBitsToUint(fs) : uint(is_);
  }
}
