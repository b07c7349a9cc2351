// CPU-class variant of gemm.comp (docs/bundle-format.md, "Kernel variants"),
// included by gemm_cpu.comp, gemm_cpu_fv.comp, gemm_cpu_vf.comp and
// gemm_cpu_ff.comp, which differ only in how A (binding 0) and B (binding 1)
// are read. Same bindings, same specialization constants, same result as
// gemm.comp:
//   Y[b][m][n] = act(ALPHA * sum_k A[b*SAB + m*SAM + k*SAK] * B[b*SBB + k*SBK + n*SBN]
//                    + BETA * bias[m*SCM + n*SCN])
// shaped for devices that run a workgroup as SIMD lanes of a CPU thread
// (Mesa lavapipe/llvmpipe): no shared memory, no barrier().
//
// Loads: llvmpipe compiles every storage-buffer load into a loop over the
// SIMD lanes with a branch per lane, whatever its address, while a texel
// fetch from a uniform texel buffer is a gather, about 15 times cheaper for a
// vec4 (docs/benchmarks.md, "GEMM load-path probe"). So A, B and the bias are
// read through uniform texel buffer views (bundle kernel.<j>.binding_types):
//   A_VEC4 / B_VEC4 = 1: an R32G32B32A32_SFLOAT view ('v'): one fetch returns
//     four consecutive elements. A is read along k (SAK == 1, SAM, SAB and K
//     multiples of 4) or, transposed, along m (SAM == 1, SAK, SAB and M
//     multiples of 4); B along n (SBN == 1, SBK, SBB and N multiples of 4) or,
//     transposed, along k (SBK == 1, SBN, SBB and K multiples of 4). The
//     toolchain (lower.cpp, Gemm) picks a kernel with a 'v' view only when
//     one of these holds; the kernel re-derives which from the constants.
//   A_VEC4 / B_VEC4 = 0: an R32_SFLOAT view ('f'): one fetch per element.
//   The bias (binding 2) is always an 'f' view; Y (binding 3) a storage
//   buffer, written once per element (vec4 stores when N % 4 == 0).
//
// Work split: each invocation owns an 8 x 8 register block (rows m0..m0+7,
// columns n0..n0+7) in sixteen named vec4 accumulators (never an indexed
// array: llvmpipe keeps indexed local arrays in memory) and streams K four k
// at a time: per 4 k, 16 vec4 fetches ('v') or 64 scalar fetches ('f') feed
// 64 vec4 FMAs. On llvmpipe every vec4 operation is four SIMD operations
// across the lanes, so values fetched "transposed" (vec4 along m or k) are
// regrouped into the same FMAs at no cost. The ceil(M / 8) * ceil(N / 8)
// blocks are numbered panel by panel (see main) and spread over the 64-wide
// workgroups, so narrow outputs still fill every lane.
// Grid: (gx, gy, BATCH) with gx * gy >= ceil(ceil(M / 8) * ceil(N / 8) / 64),
// gx <= 65535.
// Rows and columns past M / N are computed from clamped (valid) indices and
// never stored; k past K (the last 4-k step when K % 4 != 0) contributes
// exact zeros: both operands are replaced by 0, so neither texels past the
// tensor nor Inf/NaN at k = K - 1 can leak into a result.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform samplerBuffer a_t;
layout(set = 0, binding = 1) uniform samplerBuffer b_t;
layout(set = 0, binding = 2) uniform samplerBuffer bias_t;
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 3) writeonly buffer Y4_ { vec4 y4[]; };
#include "gemm_constants.glsl"
#include "common.glsl"

// Element i of an 'f' view.
float fetch1(samplerBuffer t, uint i) { return texelFetch(t, int(i)).x; }
// Elements i..i+3 of a 'v' view (i % 4 == 0).
vec4 fetch4(samplerBuffer t, uint i) { return texelFetch(t, int(i / 4u)); }

// Which 'v' layout applies (folded at pipeline creation for static sizes; uint products, not
// &&: glslang mis-emits && chains of specialization constants). Must match
// a_v / b_v in Gemm, src/toolchain/lower/lower.cpp.
#define A_ALONG_K (uint(SAK == 1u) * uint(SAM % 4u == 0u) * uint(SAB % 4u == 0u) * uint(K % 4u == 0u) != 0u)
#define B_ALONG_N (uint(SBN == 1u) * uint(SBK % 4u == 0u) * uint(SBB % 4u == 0u) * uint(N % 4u == 0u) != 0u)
#define K_MAIN (K - K % 4u)  // k0 < K_MAIN: all four k valid

// a<i> = A[row m0 + i][k0..k0+3] (rows clamped to M - 1; with `tail`,
// components with k >= K are 0). `ab` = batch offset of A.
void load_a(uint ab, uint m0, uint k0, bool tail, out vec4 a0, out vec4 a1, out vec4 a2, out vec4 a3,
            out vec4 a4, out vec4 a5, out vec4 a6, out vec4 a7) {
  const uint kl = K - 1u;
  const uint k1 = tail ? min(k0 + 1u, kl) : k0 + 1u, k2 = tail ? min(k0 + 2u, kl) : k0 + 2u;
  const uint k3 = tail ? min(k0 + 3u, kl) : k0 + 3u;
#if A_VEC4
  if (A_ALONG_K) {  // K % 4 == 0: never a tail
    const uint ml = M - 1u;
    a0 = fetch4(a_t, ab + m0 * SAM + k0);
    a1 = fetch4(a_t, ab + min(m0 + 1u, ml) * SAM + k0);
    a2 = fetch4(a_t, ab + min(m0 + 2u, ml) * SAM + k0);
    a3 = fetch4(a_t, ab + min(m0 + 3u, ml) * SAM + k0);
    a4 = fetch4(a_t, ab + min(m0 + 4u, ml) * SAM + k0);
    a5 = fetch4(a_t, ab + min(m0 + 5u, ml) * SAM + k0);
    a6 = fetch4(a_t, ab + min(m0 + 6u, ml) * SAM + k0);
    a7 = fetch4(a_t, ab + min(m0 + 7u, ml) * SAM + k0);
  } else {  // along m: SAM == 1, M % 4 == 0; rows m0 + 4.. past M read rows M - 4..
    const uint mhi = min(m0 + 4u, M - 4u);
    const vec4 l0 = fetch4(a_t, ab + k0 * SAK + m0), h0 = fetch4(a_t, ab + k0 * SAK + mhi);
    const vec4 l1 = fetch4(a_t, ab + k1 * SAK + m0), h1 = fetch4(a_t, ab + k1 * SAK + mhi);
    const vec4 l2 = fetch4(a_t, ab + k2 * SAK + m0), h2 = fetch4(a_t, ab + k2 * SAK + mhi);
    const vec4 l3 = fetch4(a_t, ab + k3 * SAK + m0), h3 = fetch4(a_t, ab + k3 * SAK + mhi);
    a0 = vec4(l0.x, l1.x, l2.x, l3.x); a1 = vec4(l0.y, l1.y, l2.y, l3.y);
    a2 = vec4(l0.z, l1.z, l2.z, l3.z); a3 = vec4(l0.w, l1.w, l2.w, l3.w);
    a4 = vec4(h0.x, h1.x, h2.x, h3.x); a5 = vec4(h0.y, h1.y, h2.y, h3.y);
    a6 = vec4(h0.z, h1.z, h2.z, h3.z); a7 = vec4(h0.w, h1.w, h2.w, h3.w);
  }
#else
  const uint ml = M - 1u;
  const uint o0 = k0 * SAK, o1 = k1 * SAK, o2 = k2 * SAK, o3 = k3 * SAK;
#define A_ROW(i) {                                                                                   \
    const uint r = ab + min(m0 + uint(i), ml) * SAM;                                                       \
    a##i = vec4(fetch1(a_t, r + o0), fetch1(a_t, r + o1), fetch1(a_t, r + o2), fetch1(a_t, r + o3)); \
  }
  A_ROW(0) A_ROW(1) A_ROW(2) A_ROW(3) A_ROW(4) A_ROW(5) A_ROW(6) A_ROW(7)
#undef A_ROW
#endif
  if (tail) {  // zero the components with k >= K (k0 < K always)
    const bvec4 z = bvec4(false, k0 + 1u >= K, k0 + 2u >= K, true);
    a0 = mix(a0, vec4(0.0), z); a1 = mix(a1, vec4(0.0), z); a2 = mix(a2, vec4(0.0), z);
    a3 = mix(a3, vec4(0.0), z); a4 = mix(a4, vec4(0.0), z); a5 = mix(a5, vec4(0.0), z);
    a6 = mix(a6, vec4(0.0), z); a7 = mix(a7, vec4(0.0), z);
  }
}

// lo<c> / hi<c> = B[k0 + c][n0..n0+3] / [n0+4..n0+7] (columns clamped to
// valid ones; with `tail`, rows k >= K are 0). `bb` = batch offset of B.
void load_b(uint bb, uint n0, uint k0, bool tail, out vec4 lo0, out vec4 hi0, out vec4 lo1, out vec4 hi1,
            out vec4 lo2, out vec4 hi2, out vec4 lo3, out vec4 hi3) {
  const uint kl = K - 1u;
  const uint k1 = tail ? min(k0 + 1u, kl) : k0 + 1u, k2 = tail ? min(k0 + 2u, kl) : k0 + 2u;
  const uint k3 = tail ? min(k0 + 3u, kl) : k0 + 3u;
#if B_VEC4
  if (B_ALONG_N) {  // N % 4 == 0; columns n0 + 4.. past N read columns N - 4..
    const uint nlo = min(n0, N - 4u), nhi = min(n0 + 4u, N - 4u);
    lo0 = fetch4(b_t, bb + k0 * SBK + nlo); hi0 = fetch4(b_t, bb + k0 * SBK + nhi);
    lo1 = fetch4(b_t, bb + k1 * SBK + nlo); hi1 = fetch4(b_t, bb + k1 * SBK + nhi);
    lo2 = fetch4(b_t, bb + k2 * SBK + nlo); hi2 = fetch4(b_t, bb + k2 * SBK + nhi);
    lo3 = fetch4(b_t, bb + k3 * SBK + nlo); hi3 = fetch4(b_t, bb + k3 * SBK + nhi);
  } else {  // along k: SBK == 1, K % 4 == 0 (never a tail)
    const uint nl = N - 1u;
    const vec4 q0 = fetch4(b_t, bb + min(n0, nl) * SBN + k0), q1 = fetch4(b_t, bb + min(n0 + 1u, nl) * SBN + k0);
    const vec4 q2 = fetch4(b_t, bb + min(n0 + 2u, nl) * SBN + k0), q3 = fetch4(b_t, bb + min(n0 + 3u, nl) * SBN + k0);
    const vec4 q4 = fetch4(b_t, bb + min(n0 + 4u, nl) * SBN + k0), q5 = fetch4(b_t, bb + min(n0 + 5u, nl) * SBN + k0);
    const vec4 q6 = fetch4(b_t, bb + min(n0 + 6u, nl) * SBN + k0), q7 = fetch4(b_t, bb + min(n0 + 7u, nl) * SBN + k0);
    lo0 = vec4(q0.x, q1.x, q2.x, q3.x); hi0 = vec4(q4.x, q5.x, q6.x, q7.x);
    lo1 = vec4(q0.y, q1.y, q2.y, q3.y); hi1 = vec4(q4.y, q5.y, q6.y, q7.y);
    lo2 = vec4(q0.z, q1.z, q2.z, q3.z); hi2 = vec4(q4.z, q5.z, q6.z, q7.z);
    lo3 = vec4(q0.w, q1.w, q2.w, q3.w); hi3 = vec4(q4.w, q5.w, q6.w, q7.w);
  }
#else
  const uint nl = N - 1u;
  const uint c0 = min(n0, nl) * SBN, c1 = min(n0 + 1u, nl) * SBN, c2 = min(n0 + 2u, nl) * SBN;
  const uint c3 = min(n0 + 3u, nl) * SBN, c4 = min(n0 + 4u, nl) * SBN, c5 = min(n0 + 5u, nl) * SBN;
  const uint c6 = min(n0 + 6u, nl) * SBN, c7 = min(n0 + 7u, nl) * SBN;
#define B_ROW(c, k) {                                                                                        \
    const uint r = bb + k * SBK;                                                                             \
    lo##c = vec4(fetch1(b_t, r + c0), fetch1(b_t, r + c1), fetch1(b_t, r + c2), fetch1(b_t, r + c3));        \
    hi##c = vec4(fetch1(b_t, r + c4), fetch1(b_t, r + c5), fetch1(b_t, r + c6), fetch1(b_t, r + c7));        \
  }
  B_ROW(0, k0) B_ROW(1, k1) B_ROW(2, k2) B_ROW(3, k3)
#undef B_ROW
#endif
  if (tail) {  // rows k >= K are 0 (k0 < K always; k0 + 3 >= K in the tail)
    if (k0 + 1u >= K) { lo1 = vec4(0.0); hi1 = vec4(0.0); }
    if (k0 + 2u >= K) { lo2 = vec4(0.0); hi2 = vec4(0.0); }
    lo3 = vec4(0.0); hi3 = vec4(0.0);
  }
}

// acc<2i>/acc<2i+1> += A[row i][k] * B[k][n0..n0+7] for the k-th component c.
#define STEP(c, lo, hi)                                                                   \
  acc0 = fma(vec4(a0.c), lo, acc0); acc1 = fma(vec4(a0.c), hi, acc1);                     \
  acc2 = fma(vec4(a1.c), lo, acc2); acc3 = fma(vec4(a1.c), hi, acc3);                     \
  acc4 = fma(vec4(a2.c), lo, acc4); acc5 = fma(vec4(a2.c), hi, acc5);                     \
  acc6 = fma(vec4(a3.c), lo, acc6); acc7 = fma(vec4(a3.c), hi, acc7);                     \
  acc8 = fma(vec4(a4.c), lo, acc8); acc9 = fma(vec4(a4.c), hi, acc9);                     \
  acc10 = fma(vec4(a5.c), lo, acc10); acc11 = fma(vec4(a5.c), hi, acc11);                 \
  acc12 = fma(vec4(a6.c), lo, acc12); acc13 = fma(vec4(a6.c), hi, acc13);                 \
  acc14 = fma(vec4(a7.c), lo, acc14); acc15 = fma(vec4(a7.c), hi, acc15);

// Four k starting at k0.
#define K_STEP(k0, tail)                                                                  \
  {                                                                                       \
    vec4 a0, a1, a2, a3, a4, a5, a6, a7, lo0, hi0, lo1, hi1, lo2, hi2, lo3, hi3;          \
    load_a(ab, m0, k0, tail, a0, a1, a2, a3, a4, a5, a6, a7);                             \
    load_b(bbase, n0, k0, tail, lo0, hi0, lo1, hi1, lo2, hi2, lo3, hi3);                  \
    STEP(x, lo0, hi0) STEP(y, lo1, hi1) STEP(z, lo2, hi2) STEP(w, lo3, hi3)               \
  }

// Y row m, columns n0..n0+7: ALPHA * acc + BETA * bias, activation; stores
// only columns < N. blo/bhi: the bias of these columns when it does not
// depend on m (SCM == 0).
void store_row(uint bz, uint m, uint n0, vec4 lo, vec4 hi, vec4 blo, vec4 bhi) {
  if (m >= M) return;
  lo *= ALPHA; hi *= ALPHA;
  if (HAS_BIAS != 0u) {
    if (SCM == 0u) {
      lo += BETA * blo; hi += BETA * bhi;
    } else if (SCN == 0u) {
      const float bm = fetch1(bias_t, m * SCM);
      lo += BETA * bm; hi += BETA * bm;
    } else {
      const uint nl = N - 1u, r = m * SCM;
      lo += BETA * vec4(fetch1(bias_t, r + n0 * SCN), fetch1(bias_t, r + min(n0 + 1u, nl) * SCN),
                        fetch1(bias_t, r + min(n0 + 2u, nl) * SCN), fetch1(bias_t, r + min(n0 + 3u, nl) * SCN));
      hi += BETA * vec4(fetch1(bias_t, r + min(n0 + 4u, nl) * SCN), fetch1(bias_t, r + min(n0 + 5u, nl) * SCN),
                        fetch1(bias_t, r + min(n0 + 6u, nl) * SCN), fetch1(bias_t, r + min(n0 + 7u, nl) * SCN));
    }
  }
  lo = apply_act4(lo, ACT, ACT_A, ACT_B);
  hi = apply_act4(hi, ACT, ACT_A, ACT_B);
  const uint o = (bz * M + m) * N + n0;
  if (N % 4u == 0u) {  // o % 4 == 0 and n0 + 3 < N
    y4[o / 4u] = lo;
    if (n0 + 4u < N) y4[o / 4u + 1u] = hi;
  } else {
    y[o] = lo.x;
    if (n0 + 1u < N) y[o + 1u] = lo.y;
    if (n0 + 2u < N) y[o + 2u] = lo.z;
    if (n0 + 3u < N) y[o + 3u] = lo.w;
    if (n0 + 4u < N) y[o + 4u] = hi.x;
    if (n0 + 5u < N) y[o + 5u] = hi.y;
    if (n0 + 6u < N) y[o + 6u] = hi.z;
    if (n0 + 7u < N) y[o + 7u] = hi.w;
  }
}

void main() {
  const uint NB = (N + 7u) / 8u, MB = (M + 7u) / 8u;
  const uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
  if (blk >= MB * NB) return;
  const uint bz = gl_WorkGroupID.z;
  // Column panels of 8 blocks (64 columns): blocks run along a panel's row
  // first, then down its rows, so one SIMD chunk of 8 lanes shares its 8 rows
  // of A and consecutive chunks reuse the panel's columns of B from cache.
  const uint q = blk / (8u * MB), rem = blk - q * 8u * MB, w = min(8u, NB - q * 8u);
  const uint m0 = (rem / w) * 8u, n0 = (q * 8u + rem % w) * 8u;
  const uint ab = bz * SAB, bbase = bz * SBB;
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
  vec4 acc4 = vec4(0.0), acc5 = vec4(0.0), acc6 = vec4(0.0), acc7 = vec4(0.0);
  vec4 acc8 = vec4(0.0), acc9 = vec4(0.0), acc10 = vec4(0.0), acc11 = vec4(0.0);
  vec4 acc12 = vec4(0.0), acc13 = vec4(0.0), acc14 = vec4(0.0), acc15 = vec4(0.0);
  for (uint k0 = 0u; k0 < K_MAIN; k0 += 4u) K_STEP(k0, false)
  if (K_MAIN < K) K_STEP(K_MAIN, true)
  vec4 blo = vec4(0.0), bhi = vec4(0.0);
  if (HAS_BIAS != 0u && SCM == 0u) {
    const uint nl = N - 1u;
    blo = vec4(fetch1(bias_t, n0 * SCN), fetch1(bias_t, min(n0 + 1u, nl) * SCN),
               fetch1(bias_t, min(n0 + 2u, nl) * SCN), fetch1(bias_t, min(n0 + 3u, nl) * SCN));
    bhi = vec4(fetch1(bias_t, min(n0 + 4u, nl) * SCN), fetch1(bias_t, min(n0 + 5u, nl) * SCN),
               fetch1(bias_t, min(n0 + 6u, nl) * SCN), fetch1(bias_t, min(n0 + 7u, nl) * SCN));
  }
  // Row by row, the accumulators shifting down so that row m0 + i is in
  // acc0/acc1: one call site of store_row (and so of apply_act). A driver
  // that inlines every call before it folds the activation to the one ACT
  // selects (lavapipe) would copy apply_act 64 times for eight call sites,
  // 20 times the pipeline creation time; the loops unroll once the constants
  // are folded.
  for (uint i = 0u; i < 8u; ++i) {
    store_row(bz, m0 + i, n0, acc0, acc1, blo, bhi);
    acc0 = acc2; acc1 = acc3; acc2 = acc4; acc3 = acc5; acc4 = acc6; acc5 = acc7; acc6 = acc8; acc7 = acc9;
    acc8 = acc10; acc9 = acc11; acc10 = acc12; acc11 = acc13; acc12 = acc14; acc13 = acc15;
  }
}
