#version 450
#extension GL_GOOGLE_include_directive : require
// CumSum along one long axis: X viewed as [OUTER, L, INNER]; one workgroup
// per row (OUTER * INNER rows), so that no invocation's loops grow with L
// beyond the toolchain's per-invocation iteration budget (docs/toolchain.md,
// "Loop budget"). A dispatch covers the scan positions [SEG_BEGIN,
// SEG_BEGIN + 256 * CHUNK) of every row (REVERSE: positions counted from the
// end); invocation j owns CHUNK consecutive positions: it sums them, a
// shared-memory scan of the 256 sums gives each invocation its carry, and it
// rescans its positions writing the running sum after (EXCLUSIVE: before)
// adding each element. Longer rows take several dispatches in order; one
// after the first starts from the running sum at SEG_BEGIN - 1, read back
// from Y. Per invocation: 2 * CHUNK + 8 loop iterations. IN_FLOAT: float32,
// else int32 (wrapping). Float sums round in chunk order, not sequentially.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint ROWS_SC = 1;  // OUTER * INNER
layout(constant_id = 1) const uint L_SC = 1;
layout(constant_id = 2) const uint INNER_SC = 1;
layout(constant_id = 3) const uint EXCLUSIVE = 0;
layout(constant_id = 4) const uint REVERSE = 0;
layout(constant_id = 5) const uint IN_FLOAT = 1;
layout(constant_id = 6) const uint SEG_BEGIN = 0;
layout(constant_id = 7) const uint CHUNK = 1;
#include "params.glsl"
#include "common.glsl"
#define ROWS PARAM_U(ROWS_SC)
#define L PARAM_U(L_SC)
#define INNER PARAM_U(INNER_SC)
shared uint sums[256];

// Adds two words as float32 or int32.
uint add_w(uint a, uint b) {
  return IN_FLOAT != 0u ? floatBitsToUint(uintBitsToFloat(a) + uintBitsToFloat(b)) : uint(int(a) + int(b));
}

void main() {
  const uint row = linear_group();
  if (row >= ROWS || SEG_BEGIN >= L) return;  // uniform per workgroup
  const uint lid = gl_LocalInvocationID.x;
  const uint base = (row / INNER) * L * INNER + row % INNER;
  const uint seg_end = min(SEG_BEGIN + 256u * CHUNK, L);
  const uint t0 = min(SEG_BEGIN + lid * CHUNK, seg_end), t1 = min(t0 + CHUNK, seg_end);
#define POS(t) (base + (REVERSE == 0u ? (t) : L - 1u - (t)) * INNER)
  uint s = 0u;  // +0.0 and int 0 share the word 0
  for (uint t = t0; t < t1; ++t) s = add_w(s, x[POS(t)]);
  sums[lid] = s;
  barrier();
  // Inclusive Hillis-Steele scan of the 256 chunk sums (8 steps).
  for (uint d = 1u; d < 256u; d <<= 1u) {
    const uint v = lid >= d ? sums[lid - d] : 0u;
    barrier();
    if (lid >= d) sums[lid] = add_w(sums[lid], v);
    barrier();
  }
  uint run = lid > 0u ? sums[lid - 1u] : 0u;
  if (SEG_BEGIN > 0u) {  // the running sum before this segment (written by the previous dispatch)
    const uint p = POS(SEG_BEGIN - 1u);
    const uint before = EXCLUSIVE != 0u ? add_w(y[p], x[p]) : y[p];
    run = add_w(before, run);
  }
  for (uint t = t0; t < t1; ++t) {
    const uint pos = POS(t);
    const uint w = x[pos];
    if (EXCLUSIVE != 0u) y[pos] = run;
    run = add_w(run, w);
    if (EXCLUSIVE == 0u) y[pos] = run;
  }
}
