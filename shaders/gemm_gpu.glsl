// Body of gemm_gpu.comp, gemm_gpu_f16w.comp and the precision forms
// gemm_gpu_fp16.comp / gemm_gpu_coopmat.comp (included after #version):
// the GPU-class row of gemm (docs/bundle-format.md "Device-specific
// variants"; docs/kernels.md "GPU-class GEMM tiles"). Same bindings, spec
// constants 0-16 and math as gemm.glsl: for batch b = gl_WorkGroupID.z
//   Y[b][m][n] = act(ALPHA * sum_k A[b*SAB + m*SAM + k*SAK] * B[b*SBB + k*SBK + n*SBN]
//                    + BETA * bias[m*SCM + n*SCN])
// with the tile of gpu_tile.glsl (TILE_M x TILE_N outputs per workgroup,
// spec constants 17 and 18). VEC_A (19): A read as vec4 along k (set when
// SAK = 1 and SAB, SAM and K are multiples of 4). VEC_B (20): B read as vec4
// along n (SBN = 1 and SBB, SBK and N multiples of 4).
layout(set = 0, binding = 0) readonly buffer A_ { float a[]; };
layout(set = 0, binding = 0) readonly buffer A4_ { vec4 a4[]; };
#ifdef F16_WEIGHTS
// gemm_gpu_f16w: B as IEEE binary16 (a constant in buffer kind 4,
// weights_f16), converted to fp32 at the load.
layout(set = 0, binding = 1) readonly buffer B_ { float16_t b[]; };
layout(set = 0, binding = 1) readonly buffer B4_ { f16vec4 b4[]; };
#define LOAD_B(i) float(b[i])
#define LOAD_B4(i) vec4(b4[i])
#else
layout(set = 0, binding = 1) readonly buffer B_ { float b[]; };
layout(set = 0, binding = 1) readonly buffer B4_ { vec4 b4[]; };
#define LOAD_B(i) b[i]
#define LOAD_B4(i) b4[i]
#endif
layout(set = 0, binding = 2) readonly buffer C_ { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
#include "gemm_constants.glsl"
#include "common.glsl"
#define GPU_TILE_ID 17
#include "gpu_tile.glsl"

// Stages A[bb][m0 .. + TILE_M][k0 .. k0 + 15] (zeros beyond M and K) in ra.
void load_a(uint k0, uint bb, uint m0, uint tid) {
  if (VEC_A != 0u) {
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      const uint m = m0 + e / 4u, k = k0 + 4u * (e % 4u);
      vec4 v = vec4(0.0);
      if (e < 4u * TILE_M && m < M && k < K) v = a4[(bb * SAB + m * SAM + k) / 4u];
      for (uint c = 0u; c < 4u; ++c) ra[4u * r + c] = v[c];
    }
  } else {
    for (uint r = 0u; r < 8u; ++r) {
      const uint e = tid + 256u * r;
      const uint m = m0 + e / TK, k = k0 + e % TK;
      if (r < RM) ra[r] = (m < M && k < K) ? a[bb * SAB + m * SAM + k * SAK] : 0.0;
    }
  }
}

// Stages B[bb][k0 .. k0 + 15][n0 .. + TILE_N) (zeros beyond K and N) in rb.
void load_b(uint k0, uint bb, uint n0, uint tid) {
  if (VEC_B != 0u) {
    const uint q = TILE_N / 4u;
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      const uint n = n0 + 4u * (e % q), k = k0 + e / q;
      vec4 v = vec4(0.0);
      if (e < 4u * TILE_N && n < N && k < K) v = LOAD_B4((bb * SBB + k * SBK + n) / 4u);
      for (uint c = 0u; c < 4u; ++c) rb[4u * r + c] = v[c];
    }
  } else {
    for (uint r = 0u; r < 8u; ++r) {
      const uint e = tid + 256u * r;
      const uint n = n0 + e % TILE_N, k = k0 + e / TILE_N;
      if (r < RN) rb[r] = (n < N && k < K) ? LOAD_B(bb * SBB + k * SBK + n * SBN) : 0.0;
    }
  }
}

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint tx = tid % 16u, ty = tid / 16u;
  const uint bb = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.y * TILE_M, n0 = gl_WorkGroupID.x * TILE_N;
  gpu_tile_init();
  const uint slices = (K + TK - 1u) / TK;
  load_a(0u, bb, m0, tid);
  load_b(0u, bb, n0, tid);
  gpu_tile_store_a(0u, tid);
  gpu_tile_store_b(0u, tid);
  gpu_tile_barrier();
  for (uint t = 0u; t < slices; ++t) {
    const uint cur = t & 1u;
    const bool more = t + 1u < slices;
    if (more) {
      load_a((t + 1u) * TK, bb, m0, tid);
      load_b((t + 1u) * TK, bb, n0, tid);
    }
    gpu_tile_fma(cur, tx, ty);
    if (more) {
      gpu_tile_store_a(cur ^ 1u, tid);
      gpu_tile_store_b(cur ^ 1u, tid);
    }
    gpu_tile_barrier();
  }
  gpu_tile_finish(tid);
}

void gpu_tile_epilogue(uint ml, uint nl, float sum) {
  const uint bb = gl_WorkGroupID.z;
  const uint m = gl_WorkGroupID.y * TILE_M + ml, n = gl_WorkGroupID.x * TILE_N + nl;
  if (m >= M || n >= N) return;
  float v = ALPHA * sum;
  if (HAS_BIAS != 0u) v += BETA * bias[m * SCM + n * SCN];
  y[(bb * M + m) * N + n] = apply_act(v, ACT, ACT_A, ACT_B);
}
