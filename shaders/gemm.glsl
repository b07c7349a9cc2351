// Body of gemm.comp (included after #version).
// Batched GEMM (Gemm and MatMul): for batch b = gl_WorkGroupID.z
//   Y[b][m][n] = act(ALPHA * sum_k A[b*SAB + m*SAM + k*SAK] * B[b*SBB + k*SBK + n*SBN]
//                    + BETA * bias[m*SCM + n*SCN])
// Y is dense [BATCH, M, N]. Same tiling as conv2d_gemm: 64x64 tiles, 16-deep
// K slices in shared memory, 4x4 register block per invocation.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer A_ { float a[]; };
layout(set = 0, binding = 1) readonly buffer B_ { float b[]; };
#define LOAD_B(i) b[i]
layout(set = 0, binding = 2) readonly buffer C_ { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
#include "gemm_constants.glsl"
#include "common.glsl"

const uint TM = 64u, TN = 64u, TK = 16u;
shared float As[TK][TM];
shared float Bs[TK][TN];

void main() {
  uint tid = gl_LocalInvocationID.x;
  uint tx = tid % 16u, ty = tid / 16u;
  uint bb = gl_WorkGroupID.z;
  uint m0 = gl_WorkGroupID.y * TM, n0 = gl_WorkGroupID.x * TN;
  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i) for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;
  for (uint k0 = 0u; k0 < K; k0 += TK) {
    for (uint r = 0u; r < 4u; ++r) {
      uint e = tid + r * 256u;
      uint kk = e % TK, mm = e / TK;
      uint m = m0 + mm, k = k0 + kk;
      As[kk][mm] = (m < M && k < K) ? a[bb * SAB + m * SAM + k * SAK] : 0.0;
    }
    for (uint r = 0u; r < 4u; ++r) {
      uint e = tid + r * 256u;
      uint nn = e % TN, kk = e / TN;
      uint n = n0 + nn, k = k0 + kk;
      Bs[kk][nn] = (n < N && k < K) ? LOAD_B(bb * SBB + k * SBK + n * SBN) : 0.0;
    }
    barrier();
    for (uint kk = 0u; kk < TK; ++kk) {
      float av[4], bv[4];
      for (uint i = 0u; i < 4u; ++i) av[i] = As[kk][ty + 16u * i];
      for (uint j = 0u; j < 4u; ++j) bv[j] = Bs[kk][tx + 16u * j];
      for (uint i = 0u; i < 4u; ++i) for (uint j = 0u; j < 4u; ++j) acc[i][j] += av[i] * bv[j];
    }
    barrier();
  }
  for (uint i = 0u; i < 4u; ++i) {
    uint m = m0 + ty + 16u * i;
    if (m >= M) continue;
    for (uint j = 0u; j < 4u; ++j) {
      uint n = n0 + tx + 16u * j;
      if (n >= N) continue;
      float v = ALPHA * acc[i][j];
      if (HAS_BIAS != 0u) v += BETA * bias[m * SCM + n * SCN];
      y[(bb * M + m) * N + n] = apply_act(v, ACT, ACT_A, ACT_B);
    }
  }
}
