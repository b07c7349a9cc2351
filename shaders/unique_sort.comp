#version 450
#extension GL_GOOGLE_include_directive : require
// Unique, sort-based form, pass 1 (repeated): one merge pass of a stable
// merge sort of the slice indices 0..L-1 by unique_compare
// (unique_order.glsl). Pass WIDTH (1, 2, 4, ...) merges pairs of sorted runs
// of WIDTH positions, run A = [s, s + WIDTH) and run B = [s + WIDTH,
// s + 2 WIDTH) (clipped to L) of the source permutation, into the same
// positions of the destination. POS [2L] holds two permutations: the source
// at POS[SRC_HALF * L ...] (WIDTH 1: the identity, read from nowhere), the
// destination at the other half. Each invocation writes CHUNK consecutive
// outputs of one pair: a binary search on the merge path finds how many of
// A's elements precede its first output, then it merges sequentially,
// taking A's element while it is below or equal to B's, so equal slices keep
// their order and the sorted permutation lists equal slices by ascending
// index. Loops: log2(WIDTH) + 1 + CHUNK comparisons; no barriers.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) buffer P_ { int pos[]; };
layout(constant_id = 0) const uint OUTER = 1;
layout(constant_id = 1) const uint L = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint IN_FLOAT = 1;
layout(constant_id = 4) const uint WIDTH = 1;
layout(constant_id = 5) const uint SRC_HALF = 0;
layout(constant_id = 6) const uint CHUNK = 1;
#include "common.glsl"
#include "unique_order.glsl"
uint src(uint p) { return WIDTH == 1u ? p : uint(pos[SRC_HALF * L + p]); }
void main() {
  const uint t = linear_index_256();
  const uint per_pair = (2u * WIDTH + CHUNK - 1u) / CHUNK;
  const uint s = (t / per_pair) * 2u * WIDTH, d = (t % per_pair) * CHUNK;
  if (s >= L) return;
  const uint mid = min(s + WIDTH, L), a = mid - s, b = min(s + 2u * WIDTH, L) - mid;
  if (d >= a + b) return;
  // i: A's elements among the first d outputs (the largest i whose A[i - 1]
  // goes before B[d - i], ties to A).
  uint lo = d > b ? d - b : 0u, hi = min(d, a);
  while (lo < hi) {
    const uint m = (lo + hi) / 2u;
    if (unique_compare(src(s + m), src(mid + d - 1u - m)) <= 0) lo = m + 1u;
    else hi = m;
  }
  uint i = lo, j = d - lo;
  const uint stop = min(d + CHUNK, a + b), out_base = (1u - SRC_HALF) * L + s;
  for (uint k = d; k < stop; ++k) {
    const bool take_a = j >= b || (i < a && unique_compare(src(s + i), src(mid + j)) <= 0);
    pos[out_base + k] = int(take_a ? src(s + i++) : src(mid + j++));
  }
}
