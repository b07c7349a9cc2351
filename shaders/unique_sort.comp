#version 450
#extension GL_GOOGLE_include_directive : require
// Unique, sort-based form, pass 1 (repeated): one merge pass of a stable
// merge sort of the slice indices 0..L-1 by unique_compare
// (unique_order.glsl). Pass WIDTH (1, 2, 4, ...) merges pairs of sorted runs
// of WIDTH positions: run A = [s, s + WIDTH) and run B = [s + WIDTH,
// s + 2 WIDTH) (clipped to L) of the source permutation into the same
// positions of the destination. POS [2L] holds two permutations: the source
// at POS[SRC_HALF * L ...] (WIDTH 1: the identity, read from nowhere), the
// destination at the other half. One invocation per position: an element of
// A moves ahead by the number of B's elements strictly below it, an element
// of B by the number of A's elements below or equal to it (binary searches),
// so equal slices keep their order and the sorted permutation lists equal
// slices by ascending index. No loops beyond log2(2 WIDTH) comparisons, no
// barriers.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) buffer P_ { int pos[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint L = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint IN_FLOAT = 1;
layout(constant_id = 4) const uint WIDTH = 1;
layout(constant_id = 5) const uint SRC_HALF = 0;
#include "common.glsl"
#include "unique_order.glsl"
uint src(uint p) { return WIDTH == 1u ? p : uint(pos[SRC_HALF * L + p]); }
void main() {
  const uint e = linear_index_256();
  if (e >= L) return;
  const uint s = e - e % (2u * WIDTH);
  const uint mid = min(s + WIDTH, L), end = min(s + 2u * WIDTH, L);
  const uint v = src(e);
  uint to;
  if (e < mid) {  // in A: B's elements strictly below v come first
    uint lo = mid, hi = end;
    while (lo < hi) {
      const uint m = (lo + hi) / 2u;
      if (unique_compare(src(m), v) < 0) lo = m + 1u;
      else hi = m;
    }
    to = e + (lo - mid);
  } else {  // in B: A's elements below or equal to v come first
    uint lo = s, hi = mid;
    while (lo < hi) {
      const uint m = (lo + hi) / 2u;
      if (unique_compare(src(m), v) <= 0) lo = m + 1u;
      else hi = m;
    }
    to = lo + (e - mid);
  }
  pos[(1u - SRC_HALF) * L + to] = int(v);
}
