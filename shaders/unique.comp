#version 450
#extension GL_GOOGLE_include_directive : require
// Unique (bundle feature data_dependent_outputs): X viewed as [OUTER, L,
// INNER] 32-bit words (IN_FLOAT: float32, else int32), its L slices
// X[:, i, :] compared whole (without an axis: OUTER = INNER = 1, the
// flattened elements) in the order of unique_order.glsl (-0.0 equals 0.0,
// subnormals are distinct, NaNs equal one another and sort last).
// Outputs, planned at L unique slices (the sort-based kernels unique_sort,
// unique_flags, unique_scan and unique_emit write the same ones):
//   Y [OUTER, L, INNER]: the unique slices, in ascending lexicographic order
//     (SORTED; the slice's elements in row-major order) or in order of first
//     occurrence;
//   FIRST [L]: each unique slice's first index in X;
//   INVERSE [L]: for each slice of X, its unique slice's index in Y;
//   COUNTS [L]: how many slices of X equal each unique slice;
//   TOTAL [1]: the number of unique slices (the runtime returns Y, FIRST and
//     COUNTS at that extent);
//   POS [2L]: scratch, here the Y index of each first occurrence, then a
//     flag per slice: 1 for a first occurrence (the sort-based kernels keep
//     their permutations there).
// One workgroup: every invocation owns slices i = lid (mod 256); a slice is a
// first occurrence when no earlier slice equals it; its Y index is the
// number of first occurrences before it (a scan over the chunks) or, sorted,
// the number of unique slices below it. O(L^2 * OUTER * INNER / 256).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { uint y[]; };
layout(set = 0, binding = 2) writeonly buffer F_ { int first_index[]; };
layout(set = 0, binding = 3) writeonly buffer V_ { int inverse[]; };
layout(set = 0, binding = 4) writeonly buffer C_ { int counts[]; };
layout(set = 0, binding = 5) writeonly buffer T_ { int total[]; };
layout(set = 0, binding = 6) coherent buffer P_ { int pos[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint L = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint IN_FLOAT = 1;
layout(constant_id = 4) const uint SORTED = 1;
#include "chunk_scan.glsl"
#include "unique_order.glsl"

// The first slice equal to slice i.
uint representative(uint i) {
  for (uint j = 0u; j < i; ++j)
    if (unique_compare(j, i) == 0) return j;
  return i;
}

void main() {
  const uint lid = gl_LocalInvocationID.x;
  // Chunks of consecutive slices, so that the unsorted order is a scan.
  const uint begin = chunk_begin(L), end = chunk_end(L);
  uint n = 0u;
  for (uint i = begin; i < end; ++i) {
    const bool is_first = representative(i) == i;
    pos[L + i] = is_first ? 1 : 0;
    n += is_first ? 1u : 0u;
  }
  uint p = chunk_first(n);  // includes a barrier
  memoryBarrierBuffer();
  barrier();
  if (lid == 255u) total[0] = int(p + n);
  for (uint i = begin; i < end; ++i) {
    if (pos[L + i] == 0) continue;
    uint at = p++;
    uint c = 0u;
    if (SORTED != 0u) at = 0u;
    for (uint j = 0u; j < L; ++j) {
      const int r = unique_compare(j, i);
      if (r == 0) ++c;
      if (SORTED != 0u && r < 0 && pos[L + j] != 0) ++at;
    }
    pos[i] = int(at);
    first_index[at] = int(i);
    counts[at] = int(c);
    for (uint o = 0u; o < OUTER; ++o)
      for (uint k = 0u; k < INNER; ++k) y[(o * L + at) * INNER + k] = unique_word(o, i, k);
  }
  memoryBarrierBuffer();
  barrier();
  for (uint i = begin; i < end; ++i) inverse[i] = pos[representative(i)];
  // (pos[representative(i)] was written by its owner before the barrier.)
}
