#version 450
#extension GL_GOOGLE_include_directive : require
// Row mean (GlobalAveragePool, ReduceMean over trailing axes), CPU-class
// kernel for many rows (bundle feature kernel_variants, docs/bundle-format.md
// "Kernel variants"): one invocation per row, no shared memory, no barrier()
// — the default kernel's one-workgroup-per-row tree costs a workgroup launch
// and six barriers per row, which dominate short rows on llvmpipe. X is read
// through a uniform texel buffer (binding type 'f'). Same bindings and
// specialization constants as reduce_mean; grid: ceil(ROWS / 64) workgroups
// split over x and y.
layout(local_size_x = 64) in;
#define TEXEL_READS 1
#include "input_x.glsl"
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint ROWS_SC = 1;
#define ROWS PARAM_U(ROWS_SC)
layout(constant_id = 1) const uint COLS_SC = 1;
#define COLS PARAM_U(COLS_SC)
#include "common.glsl"
void main() {
  uint row = linear_group() * 64u + gl_LocalInvocationID.x;
  if (row >= ROWS) return;
  uint base = row * COLS;
  // Four partial sums: independent adds the compiler can overlap.
  float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
  uint c = 0u;
  for (; c + 4u <= COLS; c += 4u) {
    s0 += LOAD_X(base + c);
    s1 += LOAD_X(base + c + 1u);
    s2 += LOAD_X(base + c + 2u);
    s3 += LOAD_X(base + c + 3u);
  }
  for (; c < COLS; ++c) s0 += LOAD_X(base + c);
  y[row] = ((s0 + s1) + (s2 + s3)) / float(COLS);
}
