// Body of reduce_mean.comp, reduce_mean_cpu.comp and reduce_mean_sg.comp
// (included after #version).
// Mean over contiguous rows (GlobalAveragePool: ROWS = N*C, COLS = H*W).
// One 64-wide workgroup per row; tree reduction in shared memory, or with
// SUBGROUP_REDUCE subgroup sums merged in one shared-memory step.
layout(local_size_x = 64) in;
#include "input_x.glsl"  // CPU twin binding types "fs"
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint ROWS_SC = 1;
#define ROWS PARAM_U(ROWS_SC)
layout(constant_id = 1) const uint COLS_SC = 1;
#define COLS PARAM_U(COLS_SC)
#include "common.glsl"
shared float part[64];  // per invocation (tree) or per subgroup (gl_NumSubgroups <= 64)
void main() {
  uint row = linear_group();
  if (row >= ROWS) return;  // uniform per workgroup
  uint t = gl_LocalInvocationID.x;
  float s = 0.0;
  for (uint c = t; c < COLS; c += 64u) s += LOAD_X(row * COLS + c);
#ifdef SUBGROUP_REDUCE
  // reduce_mean_sg: subgroupAdd within each subgroup, then one shared-memory
  // step over the gl_NumSubgroups partial sums (any subgroup size).
  s = subgroupAdd(s);
  if (subgroupElect()) part[gl_SubgroupID] = s;
  barrier();
  if (t == 0u) {
    float total = 0.0;
    for (uint i = 0u; i < gl_NumSubgroups; ++i) total += part[i];
    y[row] = total / float(COLS);
  }
#else
  part[t] = s;
  barrier();
  for (uint w = 32u; w > 0u; w >>= 1u) {
    if (t < w) part[t] += part[t + w];
    barrier();
  }
  if (t == 0u) y[row] = part[0] / float(COLS);
#endif
}
