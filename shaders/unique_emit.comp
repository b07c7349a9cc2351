#version 450
#extension GL_GOOGLE_include_directive : require
// Unique, sort-based form, last pass: the outputs of unique.comp (see its
// header for their contract) from the sorted permutation Q at
// POS[HALF * L ...] (unique_sort), the run rank RANK[r] of each sorted
// position and the run starts HEAD[u] (unique_scan), TOTAL[0] runs, and
// unsorted (SORTED 0) ORDER[i] at the other half of POS, the index of first
// occurrence i in order of first occurrence. Run u's first slice Q[HEAD[u]]
// is its smallest index (the sort is stable), so it is the unique slice's
// first occurrence; the unique slice's index in Y is u (sorted) or
// ORDER[Q[HEAD[u]]]. One invocation per sorted position r writes INVERSE for
// slice Q[r]; the invocation of a run's first position also writes that
// unique slice's Y row, FIRST and COUNTS (the run's length, up to the next
// run's start). OUTER * INNER iterations (the Y row), no barriers.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { uint y[]; };
layout(set = 0, binding = 2) writeonly buffer F_ { int first_index[]; };
layout(set = 0, binding = 3) writeonly buffer V_ { int inverse[]; };
layout(set = 0, binding = 4) writeonly buffer C_ { int counts[]; };
layout(set = 0, binding = 5) readonly buffer T_ { int total[]; };
layout(set = 0, binding = 6) readonly buffer P_ { int pos[]; };
layout(set = 0, binding = 7) readonly buffer R_ { int rank[]; };
layout(set = 0, binding = 8) readonly buffer H_ { int head[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint L = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint SORTED = 1;
layout(constant_id = 4) const uint HALF = 0;
#include "common.glsl"
void main() {
  const uint r = linear_index_256();
  if (r >= L) return;
  const uint u = uint(rank[r]), start = uint(head[u]);
  const uint f = uint(pos[HALF * L + start]);
  const uint at = SORTED != 0u ? u : uint(pos[(1u - HALF) * L + f]);
  inverse[pos[HALF * L + r]] = int(at);
  if (start != r) return;
  first_index[at] = int(f);
  counts[at] = int((u + 1u < uint(total[0]) ? uint(head[u + 1u]) : L) - r);
  for (uint o = 0u; o < OUTER; ++o)
    for (uint k = 0u; k < INNER; ++k) y[(o * L + at) * INNER + k] = x[(o * L + f) * INNER + k];
}
