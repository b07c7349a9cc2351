#version 450
#extension GL_KHR_shader_subgroup_arithmetic : require
// Test kernel for bundle feature device_variants (a GPU-class row that
// requires subgroupArithmetic), the twin of row_sum.comp: one 64-wide
// workgroup per row (workgroup r = row r); each invocation sums a strided
// part of the row, subgroupAdd reduces each subgroup, and the first
// invocation adds the gl_NumSubgroups partial sums from shared memory. Any
// subgroup size works (lavapipe: 8, SwiftShader: 4).
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint ROWS = 1u;
layout(constant_id = 1) const uint L = 1u;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
shared float partial[64];
void main() {
  uint r = gl_WorkGroupID.x;
  uint t = gl_LocalInvocationID.x;
  float s = 0.0;
  if (r < ROWS)
    for (uint k = t; k < L; k += 64u) s += x[r * L + k];
  s = subgroupAdd(s);
  if (subgroupElect()) partial[gl_SubgroupID] = s;
  barrier();
  if (t == 0u && r < ROWS) {
    float total = 0.0;
    for (uint g = 0u; g < gl_NumSubgroups; ++g) total += partial[g];
    y[r] = total;
  }
}
