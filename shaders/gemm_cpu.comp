#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class variant of gemm.comp (docs/bundle-format.md, "Kernel variants"):
// same bindings, same specialization constants, same result
//   Y[b][m][n] = act(ALPHA * sum_k A[b*SAB + m*SAM + k*SAK] * B[b*SBB + k*SBK + n*SBN]
//                    + BETA * bias[m*SCM + n*SCN])
// but shaped for devices that run a workgroup as SIMD lanes of a CPU
// (Mesa lavapipe/llvmpipe): no shared memory and no barrier() (each barrier
// is a coroutine switch there, and every lane-varying shared-memory access a
// per-lane scalar loop). Each invocation owns an 8 x 8 register block (rows
// m0..m0+7, columns n0..n0+7) held in sixteen vec4 accumulators (named, never
// an indexed array: llvmpipe keeps indexed local arrays in memory) and
// streams K once, four k at a time; every loaded value feeds 8 FMAs. On
// llvmpipe every storage-buffer load instruction is a loop over the SIMD
// lanes whatever its address, so the kernel minimises load instructions: A
// rows are read as vec4 along k and B rows as vec4 along n whenever strides
// and alignment allow.
// Workgroup x walks row blocks so that neighbouring workgroups reuse the same
// B columns from cache.
// Grid: (ceil(M / 8), ceil(N / 512), BATCH).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A_ { float a[]; };
layout(set = 0, binding = 1) readonly buffer B_ { float b[]; };
layout(set = 0, binding = 2) readonly buffer C_ { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
// The same A and B bindings seen as vec4 arrays: one load instruction for
// four consecutive floats when the layout allows (A_VEC, B_VEC below).
layout(set = 0, binding = 0) readonly buffer A4_ { vec4 a4[]; };
layout(set = 0, binding = 1) readonly buffer B4_ { vec4 b4[]; };
layout(constant_id = 0) const uint M = 1;
layout(constant_id = 1) const uint N = 1;
layout(constant_id = 2) const uint K = 1;
layout(constant_id = 3) const uint SAB = 0;
layout(constant_id = 4) const uint SAM = 0;
layout(constant_id = 5) const uint SAK = 0;
layout(constant_id = 6) const uint SBB = 0;
layout(constant_id = 7) const uint SBK = 0;
layout(constant_id = 8) const uint SBN = 0;
layout(constant_id = 9) const uint HAS_BIAS = 0;
layout(constant_id = 10) const uint SCM = 0;
layout(constant_id = 11) const uint SCN = 0;
layout(constant_id = 12) const float ALPHA = 1.0;
layout(constant_id = 13) const float BETA = 1.0;
layout(constant_id = 14) const uint ACT = 0;
layout(constant_id = 15) const float ACT_A = 0.0;
layout(constant_id = 16) const float ACT_B = 0.0;
#include "common.glsl"
// Row i (clamped to M - 1), k0..k0+3 (clamped to K - 1) of batch bb's A.
vec4 load_a(uint row, uint k0, bool vec) {
  if (vec) return a4[(row + k0) / 4u];  // row % 4 == 0, k0 % 4 == 0
  return vec4(a[row + min(k0, K - 1u) * SAK], a[row + min(k0 + 1u, K - 1u) * SAK],
              a[row + min(k0 + 2u, K - 1u) * SAK], a[row + min(k0 + 3u, K - 1u) * SAK]);
}

// Columns n0..n0+3 of B row k (zero when k >= K).
vec4 load_b(uint bbase, uint n0, uint k, bool vec) {
  const uint kc = min(k, K - 1u);
  vec4 v;
  if (vec) {
    v = b4[(bbase + kc * SBK + n0) / 4u];  // N % 4 == 0, n0 % 4 == 0, so in range
  } else {
    const uint nl = N - 1u;
    v = vec4(b[bbase + kc * SBK + min(n0, nl) * SBN], b[bbase + kc * SBK + min(n0 + 1u, nl) * SBN],
             b[bbase + kc * SBK + min(n0 + 2u, nl) * SBN], b[bbase + kc * SBK + min(n0 + 3u, nl) * SBN]);
  }
  return k < K ? v : vec4(0.0);
}

void store_row(uint bb, uint m, uint n0, vec4 lo, vec4 hi) {
  if (m >= M) return;
  for (uint j = 0u; j < 8u; ++j) {
    const uint n = n0 + j;
    if (n >= N) return;
    float r = ALPHA * (j < 4u ? lo[j] : hi[j - 4u]);
    if (HAS_BIAS != 0u) r += BETA * bias[m * SCM + n * SCN];
    y[(bb * M + m) * N + n] = apply_act(r, ACT, ACT_A, ACT_B);
  }
}

// acc_lo/hi[i] += A[row i][k] * B[k][n0..n0+7] for the k-th component of a<i>.
#define STEP(c, lo, hi)                                                                   \
  acc0 = fma(vec4(a0.c), lo, acc0); acc1 = fma(vec4(a0.c), hi, acc1);                     \
  acc2 = fma(vec4(a1.c), lo, acc2); acc3 = fma(vec4(a1.c), hi, acc3);                     \
  acc4 = fma(vec4(a2.c), lo, acc4); acc5 = fma(vec4(a2.c), hi, acc5);                     \
  acc6 = fma(vec4(a3.c), lo, acc6); acc7 = fma(vec4(a3.c), hi, acc7);                     \
  acc8 = fma(vec4(a4_.c), lo, acc8); acc9 = fma(vec4(a4_.c), hi, acc9);                   \
  acc10 = fma(vec4(a5.c), lo, acc10); acc11 = fma(vec4(a5.c), hi, acc11);                 \
  acc12 = fma(vec4(a6.c), lo, acc12); acc13 = fma(vec4(a6.c), hi, acc13);                 \
  acc14 = fma(vec4(a7.c), lo, acc14); acc15 = fma(vec4(a7.c), hi, acc15);

void main() {
  // Folded at pipeline creation (uint products, not &&: glslang mis-emits &&
  // chains of specialization constants).
  // vec4 reads of A along k: unit k stride, every row start a multiple of 4.
  const bool a_vec = uint(SAK == 1u) * uint(SAM % 4u == 0u) * uint(SAB % 4u == 0u) * uint(K % 4u == 0u) != 0u;
  // vec4 reads of B along n: unit n stride, every row start a multiple of 4.
  const bool b_vec = uint(SBN == 1u) * uint(SBK % 4u == 0u) * uint(SBB % 4u == 0u) * uint(N % 4u == 0u) != 0u;
  const uint bb = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.x * 8u;
  const uint n0 = (gl_WorkGroupID.y * 64u + gl_LocalInvocationID.x) * 8u;
  // b_vec: blocks past N read the last 4 valid columns (and store nothing).
  const uint nlo = b_vec ? min(n0, N - 4u) : n0, nhi = b_vec ? min(n0 + 4u, N - 4u) : n0 + 4u;
  const uint ml = M - 1u, ab = bb * SAB;
  const uint r0 = ab + min(m0, ml) * SAM, r1 = ab + min(m0 + 1u, ml) * SAM;
  const uint r2 = ab + min(m0 + 2u, ml) * SAM, r3 = ab + min(m0 + 3u, ml) * SAM;
  const uint r4 = ab + min(m0 + 4u, ml) * SAM, r5 = ab + min(m0 + 5u, ml) * SAM;
  const uint r6 = ab + min(m0 + 6u, ml) * SAM, r7 = ab + min(m0 + 7u, ml) * SAM;
  const uint bbase = bb * SBB;
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
  vec4 acc4 = vec4(0.0), acc5 = vec4(0.0), acc6 = vec4(0.0), acc7 = vec4(0.0);
  vec4 acc8 = vec4(0.0), acc9 = vec4(0.0), acc10 = vec4(0.0), acc11 = vec4(0.0);
  vec4 acc12 = vec4(0.0), acc13 = vec4(0.0), acc14 = vec4(0.0), acc15 = vec4(0.0);
  for (uint k0 = 0u; k0 < K; k0 += 4u) {
    const vec4 a0 = load_a(r0, k0, a_vec), a1 = load_a(r1, k0, a_vec);
    const vec4 a2 = load_a(r2, k0, a_vec), a3 = load_a(r3, k0, a_vec);
    const vec4 a4_ = load_a(r4, k0, a_vec), a5 = load_a(r5, k0, a_vec);
    const vec4 a6 = load_a(r6, k0, a_vec), a7 = load_a(r7, k0, a_vec);
    vec4 lo = load_b(bbase, nlo, k0, b_vec), hi = load_b(bbase, nhi, k0, b_vec);
    STEP(x, lo, hi)
    lo = load_b(bbase, nlo, k0 + 1u, b_vec); hi = load_b(bbase, nhi, k0 + 1u, b_vec);
    STEP(y, lo, hi)
    lo = load_b(bbase, nlo, k0 + 2u, b_vec); hi = load_b(bbase, nhi, k0 + 2u, b_vec);
    STEP(z, lo, hi)
    lo = load_b(bbase, nlo, k0 + 3u, b_vec); hi = load_b(bbase, nhi, k0 + 3u, b_vec);
    STEP(w, lo, hi)
  }
  if (n0 >= N) return;
  store_row(bb, m0, n0, acc0, acc1);
  store_row(bb, m0 + 1u, n0, acc2, acc3);
  store_row(bb, m0 + 2u, n0, acc4, acc5);
  store_row(bb, m0 + 3u, n0, acc6, acc7);
  store_row(bb, m0 + 4u, n0, acc8, acc9);
  store_row(bb, m0 + 5u, n0, acc10, acc11);
  store_row(bb, m0 + 6u, n0, acc12, acc13);
  store_row(bb, m0 + 7u, n0, acc14, acc15);
}
