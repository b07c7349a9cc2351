#version 450
#extension GL_GOOGLE_include_directive : require
// Compress with a condition read at run time (bundle feature
// data_dependent_outputs): X viewed as [OUTER, D, INNER] 32-bit words, the
// condition COND_LEN int32 words (entries past D, and the missing ones past
// COND_LEN, select nothing). Y is planned at the largest result
// [OUTER, D, INNER]; slab k of the selected positions goes to Y[o, k, :], and
// COUNT[0] receives how many were selected (the runtime returns Y with that
// extent along the axis). One workgroup: each of the 256 invocations counts
// the selected positions of its contiguous chunk, a scan over the 256 counts
// in shared memory gives each chunk its first output slot, then each copies
// its chunk's selected slabs in order (O(OUTER * D * INNER) work).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) readonly buffer C_ { int cond[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { uint y[]; };
layout(set = 0, binding = 3) writeonly buffer N_ { int count[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint D = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint COND_LEN = 1;
#include "chunk_scan.glsl"
void main() {
  const uint len = min(D, COND_LEN);
  const uint begin = chunk_begin(len), end = chunk_end(len);
  uint n = 0u;
  for (uint j = begin; j < end; ++j) n += cond[j] != 0 ? 1u : 0u;
  uint k = chunk_first(n);
  if (gl_LocalInvocationID.x == 255u) count[0] = int(k + n);
  for (uint j = begin; j < end; ++j) {
    if (cond[j] == 0) continue;
    for (uint o = 0u; o < OUTER; ++o)
      for (uint i = 0u; i < INNER; ++i) y[(o * D + k) * INNER + i] = x[(o * D + j) * INNER + i];
    ++k;
  }
}
