#version 450
#extension GL_GOOGLE_include_directive : require
// NonZero (bundle feature data_dependent_outputs): X of N 32-bit words
// (IN_FLOAT: float32, where -0.0 is zero and NaN is not; else int32) with
// dimensions DIM0..DIM5 (RANK of them used, row-major). Y is planned at the
// largest result [RANK, N]: the k-th nonzero element's coordinates go to
// Y[d, k] (d < RANK), in row-major order of X, and COUNT[0] receives how many
// there are (the runtime returns Y as [RANK, COUNT]). One workgroup per
// dispatch, over the elements [SEG_BEGIN, SEG_BEGIN + 256 * CHUNK): chunk
// counts, a scan in shared memory, then each invocation writes its chunk.
// Longer inputs take several dispatches in order, each continuing from the
// COUNT the previous one wrote, so that no invocation loops more than
// CHUNK * (2 + RANK) + 256 times (the toolchain's iteration budget).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { int y[]; };
layout(set = 0, binding = 2) buffer N_ { int count[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint RANK = 1;
layout(constant_id = 2) const uint IN_FLOAT = 1;
layout(constant_id = 3) const uint DIM0 = 1;
layout(constant_id = 4) const uint DIM1 = 1;
layout(constant_id = 5) const uint DIM2 = 1;
layout(constant_id = 6) const uint DIM3 = 1;
layout(constant_id = 7) const uint DIM4 = 1;
layout(constant_id = 8) const uint DIM5 = 1;
layout(constant_id = 9) const uint SEG_BEGIN = 0;
layout(constant_id = 10) const uint CHUNK = 1;
#include "chunk_scan.glsl"
#include "float_order.glsl"
// On the bits: a subnormal is nonzero even where the driver flushes it in comparisons.
bool nonzero(uint w) { return IN_FLOAT != 0u ? !f_is_zero(w) : w != 0u; }
void main() {
  if (SEG_BEGIN >= N && SEG_BEGIN > 0u) return;
  const uint seg_end = min(SEG_BEGIN + 256u * CHUNK, N);
  const uint begin = seg_chunk_begin(SEG_BEGIN, seg_end, CHUNK), end = seg_chunk_end(SEG_BEGIN, seg_end, CHUNK);
  // Read before chunk_first's barriers; the last invocation overwrites it after them.
  const uint before = SEG_BEGIN > 0u ? uint(count[0]) : 0u;
  uint n = 0u;
  for (uint j = begin; j < end; ++j) n += nonzero(x[j]) ? 1u : 0u;
  uint k = before + chunk_first(n);
  if (gl_LocalInvocationID.x == 255u) count[0] = int(k + n);
  const uint dims[6] = uint[6](DIM0, DIM1, DIM2, DIM3, DIM4, DIM5);
  for (uint j = begin; j < end; ++j) {
    if (!nonzero(x[j])) continue;
    uint rest = j;
    for (int d = int(RANK) - 1; d >= 0; --d) {
      y[uint(d) * N + k] = int(rest % dims[d]);
      rest /= dims[d];
    }
    ++k;
  }
}
