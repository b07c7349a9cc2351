// Body of conv2d_gemm_gpu.comp, conv2d_gemm_gpu_f16w.comp and the precision
// forms conv2d_gemm_gpu_fp16.comp / conv2d_gemm_gpu_coopmat.comp (included after
// #version): the GPU-class row of conv2d_gemm (docs/bundle-format.md
// "Device-specific variants"; docs/kernels.md "GPU-class GEMM tiles"). Same
// bindings, math and epilogue (bias, fused residual, activation) as
// conv2d_gemm.glsl; Conv2D as an implicit GEMM per group g
// (gl_WorkGroupID.z):
//   Y[m][col] = act(sum_k W[g*M + m][k] * im2col(X)[k][col] + bias[g*M + m] (+ R))
// with the tile of gpu_tile.glsl (TILE_M x TILE_N outputs per workgroup,
// spec constants 21 and 22). VEC_A (23): W rows read as vec4 (set when
// C/group * KH * KW is a multiple of 4). VEC_B (24): X read as vec4 along
// the pixels (set for a 1x1, stride-1, unpadded Conv whose H * W is a
// multiple of 4: four consecutive columns are four consecutive pixels of one
// image).
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
#ifdef F16_WEIGHTS
// conv2d_gemm_gpu_f16w: W as IEEE binary16 (buffer kind 4, weights_f16; needs
// storageBuffer16BitAccess only), converted to fp32 at the load.
layout(set = 0, binding = 1) readonly buffer W_ { float16_t w[]; };
#define LOAD_W(i) float(w[i])
#else
layout(set = 0, binding = 1) readonly buffer W_ { float w[]; };
#define LOAD_W(i) w[i]
#endif
layout(set = 0, binding = 2) readonly buffer B_ { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 4) readonly buffer R_ { float res[]; };
#include "conv2d_constants.glsl"
#include "common.glsl"
#ifdef F16_WEIGHTS
layout(set = 0, binding = 1) readonly buffer W4_ { f16vec4 w4[]; };
#define LOAD_W4(i) vec4(w4[i])
#else
layout(set = 0, binding = 1) readonly buffer W4_ { vec4 w4[]; };
#define LOAD_W4(i) w4[i]
#endif
layout(set = 0, binding = 0) readonly buffer X4_ { vec4 x4[]; };
#define GPU_TILE_ID 21
#include "gpu_tile.glsl"

// Stages W[g*M + m0 .. + TILE_M][k0 .. k0 + 15] (zeros beyond M and KD) in ra.
void load_a(uint k0, uint g, uint m0, uint M, uint KD, uint tid) {
  if (VEC_A != 0u) {
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      const uint m = m0 + e / 4u, k = k0 + 4u * (e % 4u);
      vec4 v = vec4(0.0);
      if (e < 4u * TILE_M && m < M && k < KD) v = LOAD_W4(((g * M + m) * KD + k) / 4u);
      for (uint c = 0u; c < 4u; ++c) ra[4u * r + c] = v[c];
    }
  } else {
    for (uint r = 0u; r < 8u; ++r) {
      const uint e = tid + 256u * r;
      const uint m = m0 + e / TK, k = k0 + e % TK;
      if (r < RM) ra[r] = (m < M && k < KD) ? LOAD_W((g * M + m) * KD + k) : 0.0;
    }
  }
}

// Stages im2col(X)[k0 .. k0 + 15][n0 .. n0 + TILE_N) (zeros outside the
// image, beyond NCOL and KD) in rb. Scalar: this invocation's column is
// (lnb, loh, low) when lcol_ok.
void load_b(uint k0, uint g, uint n0, uint KD, uint NCOL, uint tid, bool lcol_ok, uint lnb, uint loh, uint low) {
  const uint CG = C / GROUPS;
  if (VEC_B != 0u) {
    const uint q = TILE_N / 4u, HW = H * W;
    for (uint r = 0u; r < 2u; ++r) {
      const uint e = tid + 256u * r;
      const uint col = n0 + 4u * (e % q), k = k0 + e / q;
      vec4 v = vec4(0.0);
      if (e < 4u * TILE_N && col < NCOL && k < KD) {
        const uint nb = col / HW, p = col % HW;
        v = x4[((nb * C + g * CG + k) * HW + p) / 4u];
      }
      for (uint c = 0u; c < 4u; ++c) rb[4u * r + c] = v[c];
    }
  } else {
    for (uint r = 0u; r < 8u; ++r) {
      if (r >= RN) continue;
      const uint k = k0 + tid / TILE_N + r * (256u / TILE_N);
      float v = 0.0;
      if (lcol_ok && k < KD) {
        uint kw = k % KW; uint t = k / KW; uint kh = t % KH; uint c = t / KH;
        int ih = int(loh * SH + kh * DH) - int(PH);
        int iw = int(low * SW + kw * DW) - int(PW);
        if (ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W))
          v = x[((lnb * C + g * CG + c) * H + uint(ih)) * W + uint(iw)];
      }
      rb[r] = v;
    }
  }
}

void main() {
  const uint M = K_OUT / GROUPS;
  const uint KD = (C / GROUPS) * KH * KW;
  const uint NCOL = N * OH * OW;
  const uint tid = gl_LocalInvocationID.x;
  const uint tx = tid % 16u, ty = tid / 16u;
  const uint g = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.y * TILE_M, n0 = gl_WorkGroupID.x * TILE_N;

  // The column this invocation loads on the scalar path (fixed across slices).
  const uint lcol = n0 + tid % TILE_N;
  const bool lcol_ok = lcol < NCOL;
  uint lnb = 0u, loh = 0u, low = 0u;
  if (lcol_ok) { low = lcol % OW; uint t = lcol / OW; loh = t % OH; lnb = t / OH; }

  gpu_tile_init();
  const uint slices = (KD + TK - 1u) / TK;
  load_a(0u, g, m0, M, KD, tid);
  load_b(0u, g, n0, KD, NCOL, tid, lcol_ok, lnb, loh, low);
  gpu_tile_store_a(0u, tid);
  gpu_tile_store_b(0u, tid);
  gpu_tile_barrier();
  for (uint t = 0u; t < slices; ++t) {
    const uint cur = t & 1u;
    const bool more = t + 1u < slices;
    if (more) {
      load_a((t + 1u) * TK, g, m0, M, KD, tid);
      load_b((t + 1u) * TK, g, n0, KD, NCOL, tid, lcol_ok, lnb, loh, low);
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
  const uint M = K_OUT / GROUPS;
  const uint NCOL = N * OH * OW;
  const uint m = gl_WorkGroupID.y * TILE_M + ml, col = gl_WorkGroupID.x * TILE_N + nl;
  if (m >= M || col >= NCOL) return;
  const uint oc = gl_WorkGroupID.z * M + m;
  uint ow = col % OW; uint t = col / OW; uint oh = t % OH; uint nb = t / OH;
  uint yi = ((nb * K_OUT + oc) * OH + oh) * OW + ow;
  float v = sum + (HAS_BIAS != 0u ? bias[oc] : 0.0);
  if (HAS_RES != 0u) v += res[yi];
  y[yi] = apply_act(v, ACT, ACT_A, ACT_B);
}
