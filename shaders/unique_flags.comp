#version 450
#extension GL_GOOGLE_include_directive : require
// Unique, sort-based form, pass 2: the first slice of each run of equal
// slices. With the sorted permutation Q at POS[HALF * L ...] (unique_sort),
// one invocation per sorted position r writes RUN[r] = 1 when r starts a
// run (r = 0 or slice Q[r] differs from slice Q[r - 1]), else 0; unsorted
// (SORTED 0) also FIRST_FLAG[Q[r]] (the other half of POS, indexed by slice)
// the same flag: 1 for a slice that is its value's first occurrence.
// OUTER * INNER iterations (one comparison), no barriers.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) buffer P_ { int pos[]; };
layout(set = 0, binding = 2) writeonly buffer R_ { int run[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint L = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint IN_FLOAT = 1;
layout(constant_id = 4) const uint HALF = 0;
layout(constant_id = 5) const uint SORTED = 1;
#include "common.glsl"
#include "unique_order.glsl"
void main() {
  const uint r = linear_index_256();
  if (r >= L) return;
  const uint q = uint(pos[HALF * L + r]);
  const int flag = r == 0u || unique_compare(uint(pos[HALF * L + r - 1u]), q) != 0 ? 1 : 0;
  run[r] = flag;
  if (SORTED == 0u) pos[(1u - HALF) * L + q] = flag;
}
