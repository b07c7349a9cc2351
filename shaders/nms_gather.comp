#version 450
#extension GL_GOOGLE_include_directive : require
// NonMaxSuppression, step 2 of 2 (bundle feature data_dependent_outputs):
// concatenates the selections of nms_select. SEL [PAIRS, SLOTS] int32 and
// COUNT [PAIRS] int32 per (batch, class) pair, PAIRS = batches * CLASSES in
// batch-major order. Y, planned at the largest result [PAIRS * SLOTS, 3],
// receives the rows [batch, class, box] pair by pair in selection order (ONNX
// Runtime's order), and TOTAL[0] how many rows there are (the runtime
// returns Y as [TOTAL, 3]). One workgroup: each invocation owns a chunk of
// pairs, a scan in shared memory gives each chunk its first row.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer SEL_ { int sel[]; };
layout(set = 0, binding = 1) readonly buffer C_ { int count[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { int y[]; };
layout(set = 0, binding = 3) writeonly buffer N_ { int total[]; };
layout(constant_id = 0) const uint PAIRS = 1;
layout(constant_id = 1) const uint CLASSES = 1;
layout(constant_id = 2) const uint SLOTS = 1;
#include "chunk_scan.glsl"
void main() {
  const uint begin = chunk_begin(PAIRS), end = chunk_end(PAIRS);
  uint n = 0u;
  bool failed = false;  // a pair's selection reported -1 (nms_select*)
  for (uint p = begin; p < end; ++p) {
    n += uint(clamp(count[p], 0, int(SLOTS)));
    failed = failed || count[p] < 0;
  }
  uint row = chunk_first(n);
  if (gl_LocalInvocationID.x == 255u) total[0] = int(row + n);
  memoryBarrierBuffer();
  barrier();
  if (failed) total[0] = -1;  // the runtime reports an error for the frame
  for (uint p = begin; p < end; ++p) {
    const uint c = uint(clamp(count[p], 0, int(SLOTS)));
    for (uint k = 0u; k < c; ++k, ++row) {
      y[3u * row] = int(p / CLASSES);
      y[3u * row + 1u] = int(p % CLASSES);
      y[3u * row + 2u] = sel[p * SLOTS + k];
    }
  }
}
