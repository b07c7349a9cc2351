#version 450
#extension GL_GOOGLE_include_directive : require
// Compress with a condition read at run time (bundle feature
// data_dependent_outputs): X viewed as [OUTER, D, INNER] 32-bit words, the
// condition COND_LEN int32 words (entries past D, and the missing ones past
// COND_LEN, select nothing). Y is planned at the largest result
// [OUTER, D, INNER]; slab k of the selected positions goes to Y[o, k, :], and
// COUNT[0] receives how many were selected (the runtime returns Y with that
// extent along the axis). This kernel finds the slots and the count: one workgroup over
// the positions [SEG_BEGIN, SEG_BEGIN + 256 * CHUNK): each invocation counts
// the selected positions of its contiguous chunk, a scan over the 256 counts
// in shared memory gives each chunk its first output slot, then each writes
// SLOT[j] (the slot of position j, -1 when not selected); longer conditions
// take several dispatches in order, each continuing from the COUNT the
// previous one wrote (2 * CHUNK + 256 loop iterations per invocation, the
// toolchain's iteration budget). compress_copy.comp then moves the slabs.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer C_ { int cond[]; };
layout(set = 0, binding = 1) buffer N_ { int count[]; };
layout(set = 0, binding = 2) buffer S_ { int slot[]; };  // [D]
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint D = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint COND_LEN = 1;
layout(constant_id = 4) const uint SEG_BEGIN = 0;
layout(constant_id = 5) const uint CHUNK = 1;
#include "chunk_scan.glsl"
void main() {
  const uint len = min(D, COND_LEN);
  if (SEG_BEGIN >= len && SEG_BEGIN > 0u) return;
  const uint seg_end = min(SEG_BEGIN + 256u * CHUNK, len);
  const uint begin = seg_chunk_begin(SEG_BEGIN, seg_end, CHUNK), end = seg_chunk_end(SEG_BEGIN, seg_end, CHUNK);
  // Read before chunk_first's barriers; the last invocation overwrites it after them.
  const uint before = SEG_BEGIN > 0u ? uint(count[0]) : 0u;
  uint n = 0u;
  for (uint j = begin; j < end; ++j) n += cond[j] != 0 ? 1u : 0u;
  uint k = before + chunk_first(n);
  if (gl_LocalInvocationID.x == 255u) count[0] = int(k + n);
  for (uint j = begin; j < end; ++j) slot[j] = cond[j] != 0 ? int(k++) : -1;
}
