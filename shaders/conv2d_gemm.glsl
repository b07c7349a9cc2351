// Body of conv2d_gemm.comp (included after #version).
// Conv2D as an implicit GEMM per group g (gl_WorkGroupID.z):
//   Y[m][col] = act(sum_k W[g*M + m][k] * im2col(X)[k][col] + bias[g*M + m])
// M = K_OUT / GROUPS, col = (n, oh, ow) over N*OH*OW, k = (c, kh, kw) over
// (C / GROUPS) * KH * KW. 64x64 output tile per workgroup, 16-deep K slices
// staged in shared memory, each invocation accumulates a 4x4 register block.
// With HAS_RES, R (binding 4, Y's shape) is added before the activation (a
// fused residual Add).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer W_ { float w[]; };
#define LOAD_W(i) w[i]
layout(set = 0, binding = 2) readonly buffer B_ { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 4) readonly buffer R_ { float res[]; };
#include "conv2d_constants.glsl"
#include "common.glsl"

const uint TM = 64u, TN = 64u, TK = 16u;
shared float As[TK][TM];
shared float Bs[TK][TN];

void main() {
  const uint M = K_OUT / GROUPS;
  const uint CG = C / GROUPS;
  const uint KD = CG * KH * KW;
  const uint NCOL = N * OH * OW;
  uint tid = gl_LocalInvocationID.x;
  uint tx = tid % 16u, ty = tid / 16u;
  uint g = gl_WorkGroupID.z;
  uint m0 = gl_WorkGroupID.y * TM, n0 = gl_WorkGroupID.x * TN;

  // Column this invocation loads into Bs (fixed across K slices).
  uint lcol = n0 + tid % TN;
  bool lcol_ok = lcol < NCOL;
  uint lnb = 0u, loh = 0u, low = 0u;
  if (lcol_ok) { low = lcol % OW; uint t = lcol / OW; loh = t % OH; lnb = t / OH; }

  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i) for (uint j = 0u; j < 4u; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0u; k0 < KD; k0 += TK) {
    for (uint r = 0u; r < 4u; ++r) {
      uint e = tid + r * 256u;
      uint kk = e % TK, mm = e / TK;
      uint m = m0 + mm, k = k0 + kk;
      As[kk][mm] = (m < M && k < KD) ? LOAD_W((g * M + m) * KD + k) : 0.0;
    }
    for (uint r = 0u; r < 4u; ++r) {
      uint kk = tid / TN + r * 4u;
      uint k = k0 + kk;
      float v = 0.0;
      if (lcol_ok && k < KD) {
        uint kw = k % KW; uint t = k / KW; uint kh = t % KH; uint c = t / KH;
        int ih = int(loh * SH + kh * DH) - int(PH);
        int iw = int(low * SW + kw * DW) - int(PW);
        if (ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W))
          v = x[((lnb * C + g * CG + c) * H + uint(ih)) * W + uint(iw)];
      }
      Bs[kk][tid % TN] = v;
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
    uint oc = g * M + m;
    float bv = HAS_BIAS != 0u ? bias[oc] : 0.0;
    for (uint j = 0u; j < 4u; ++j) {
      uint col = n0 + tx + 16u * j;
      if (col >= NCOL) continue;
      uint ow = col % OW; uint t = col / OW; uint oh = t % OH; uint nb = t / OH;
      uint yi = ((nb * K_OUT + oc) * OH + oh) * OW + ow;
      float v = acc[i][j] + bv;
      if (HAS_RES != 0u) v += res[yi];
      y[yi] = apply_act(v, ACT, ACT_A, ACT_B);
    }
  }
}
