#version 450
#extension GL_GOOGLE_include_directive : require
// Unique, sort-based form, pass 3 (once or twice): an inclusive scan of 0/1
// flags in place, V[OFFSET + i] becoming (flags at 0..i) - 1: over RUN
// (RANKS 1) the rank of each sorted position's run, that is its unique
// slice's index in sorted order; over FIRST_FLAG (RANKS 0) each first
// occurrence's index in order of first occurrence. With RANKS, a run
// starting at sorted position i also writes HEAD[rank] = i, and the last
// invocation TOTAL[0], the number of runs. One workgroup per dispatch over
// the positions [SEG_BEGIN, SEG_BEGIN + 256 * CHUNK): chunk sums, a scan in
// shared memory (chunk_scan.glsl), then each invocation rewrites its chunk.
// Longer inputs take several dispatches in order, each continuing from the
// previous segment's last value, so that no invocation loops more than
// 2 * CHUNK + 256 times (the toolchain's iteration budget).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) writeonly buffer T_ { int total[]; };
layout(set = 0, binding = 1) buffer V_ { int v[]; };
layout(set = 0, binding = 2) writeonly buffer H_ { int head[]; };
layout(constant_id = 0) const uint L = 1;
layout(constant_id = 1) const uint SEG_BEGIN = 0;
layout(constant_id = 2) const uint CHUNK = 1;
layout(constant_id = 3) const uint OFFSET = 0;
layout(constant_id = 4) const uint RANKS = 1;
#include "chunk_scan.glsl"
void main() {
  if (SEG_BEGIN >= L && SEG_BEGIN > 0u) return;
  const uint seg_end = min(SEG_BEGIN + 256u * CHUNK, L);
  const uint begin = seg_chunk_begin(SEG_BEGIN, seg_end, CHUNK), end = seg_chunk_end(SEG_BEGIN, seg_end, CHUNK);
  // The previous segment (an earlier dispatch) ends with the count so far, less one.
  const uint before = SEG_BEGIN > 0u ? uint(v[OFFSET + SEG_BEGIN - 1u] + 1) : 0u;
  uint n = 0u;
  for (uint i = begin; i < end; ++i) n += uint(v[OFFSET + i]);
  uint k = before + chunk_first(n);
  if (RANKS != 0u && gl_LocalInvocationID.x == 255u) total[0] = int(k + n);
  for (uint i = begin; i < end; ++i) {
    const int flag = v[OFFSET + i];
    k += uint(flag);
    v[OFFSET + i] = int(k) - 1;
    if (RANKS != 0u && flag != 0) head[k - 1u] = int(i);
  }
}
