// GEMM load-path probe (issue 7; docs/benchmarks.md, "GEMM load-path probe"):
// the inner loop of shaders/gemm_cpu.comp with the same FMA count and the same
// data reuse, built several times (gemm_probe_*.comp) with only the source of
// the operands changed, to measure which load path bounds it on a device.
//
//   Y[m][n] = sum_k W[m][k] * L[k][n]      (M % 8 == 0, N % 512 == 0, K % 4 == 0)
//
// W is the workgroup-uniform operand (gemm_cpu's A: every lane of a workgroup
// reads the same 8 rows m0..m0+7), L the lane-varying one (gemm_cpu's B: lane
// i reads columns n0..n0+7, n0 = 8 * global lane). Each invocation owns an
// 8 x 8 register block in sixteen named vec4 accumulators and streams K four
// k at a time: per 4 k, 64 vec4 FMAs, 8 vec4 W loads and 8 vec4 L loads.
// Grid: (M / 8, N / 512), 64 lanes, as gemm_cpu.
//
// The including file defines W_SRC and L_SRC:
//   W_SRC  0 SSBO vec4 (gemm_cpu), 1 SSBO scalar (4 loads per vec4),
//          2 UBO vec4 (std140 vec4 array, W <= 64 KiB), 3 shared memory filled
//          once per workgroup (one barrier), 4 registers: W[m][0..3] loaded
//          once before the loop and reused for every k (no loads in the loop),
//          5 uniform texel buffer (samplerBuffer, RGBA32F texels, texelFetch)
//   L_SRC  0 SSBO vec4 (gemm_cpu), 1 SSBO scalar, 2 registers: L[0..3][n0..n0+7]
//          loaded once and reused for every k, 3 uniform texel buffer
//          (samplerBuffer, texelFetch), 4 storage texel buffer (imageBuffer
//          rgba32f, imageLoad), 5 uniform texel buffer of R32 texels (four
//          scalar texelFetch per vec4)
//   W_SRC 6: uniform texel buffer of R32 texels (four scalar texelFetch per vec4)
// With registers, the value used at step k is W[m][k % 4] / L[k % 4][n]; the
// host's reference computes the same.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint M = 8;
layout(constant_id = 1) const uint N = 512;
layout(constant_id = 2) const uint K = 4;

#if W_SRC == 2
layout(std140, set = 0, binding = 0) uniform WU_ { vec4 wu[4096]; };  // 64 KiB
#elif W_SRC == 5 || W_SRC == 6
layout(set = 0, binding = 0) uniform samplerBuffer wt;
#else
layout(std430, set = 0, binding = 0) readonly buffer W_ { float w[]; };
layout(std430, set = 0, binding = 0) readonly buffer W4_ { vec4 w4[]; };
#endif
#if L_SRC == 3 || L_SRC == 5
layout(set = 0, binding = 1) uniform samplerBuffer lt;
#elif L_SRC == 4
layout(set = 0, binding = 1, rgba32f) readonly uniform imageBuffer li;
#else
layout(std430, set = 0, binding = 1) readonly buffer L_ { float l[]; };
layout(std430, set = 0, binding = 1) readonly buffer L4_ { vec4 l4[]; };
#endif
layout(std430, set = 0, binding = 2) writeonly buffer Y4_ { vec4 y4[]; };
#if W_SRC == 3
shared vec4 ws[2u * K];  // rows m0..m0+7 of W: 8 * K floats
#endif

// W[m0 + r][k0..k0+3]; rbase = (m0 + r) * K.
vec4 load_w(uint rbase, uint r, uint k0) {
#if W_SRC == 0
  return w4[(rbase + k0) / 4u];
#elif W_SRC == 1
  return vec4(w[rbase + k0], w[rbase + k0 + 1u], w[rbase + k0 + 2u], w[rbase + k0 + 3u]);
#elif W_SRC == 2
  return wu[(rbase + k0) / 4u];
#elif W_SRC == 3
  return ws[(r * K + k0) / 4u];
#elif W_SRC == 5
  return texelFetch(wt, int((rbase + k0) / 4u));
#elif W_SRC == 6
  const int i = int(rbase + k0);
  return vec4(texelFetch(wt, i).x, texelFetch(wt, i + 1).x, texelFetch(wt, i + 2).x, texelFetch(wt, i + 3).x);
#else
  return vec4(0.0);  // unused
#endif
}

// L[k][c..c+3].
vec4 load_l(uint k, uint c) {
#if L_SRC == 3
  return texelFetch(lt, int((k * N + c) / 4u));
#elif L_SRC == 4
  return imageLoad(li, int((k * N + c) / 4u));
#elif L_SRC == 5
  const int i = int(k * N + c);
  return vec4(texelFetch(lt, i).x, texelFetch(lt, i + 1).x, texelFetch(lt, i + 2).x, texelFetch(lt, i + 3).x);
#elif L_SRC == 1
  const uint i = k * N + c;
  return vec4(l[i], l[i + 1u], l[i + 2u], l[i + 3u]);
#else
  return l4[(k * N + c) / 4u];
#endif
}

#define STEP(c, lo, hi)                                                                   \
  acc0 = fma(vec4(a0.c), lo, acc0); acc1 = fma(vec4(a0.c), hi, acc1);                     \
  acc2 = fma(vec4(a1.c), lo, acc2); acc3 = fma(vec4(a1.c), hi, acc3);                     \
  acc4 = fma(vec4(a2.c), lo, acc4); acc5 = fma(vec4(a2.c), hi, acc5);                     \
  acc6 = fma(vec4(a3.c), lo, acc6); acc7 = fma(vec4(a3.c), hi, acc7);                     \
  acc8 = fma(vec4(a4_.c), lo, acc8); acc9 = fma(vec4(a4_.c), hi, acc9);                   \
  acc10 = fma(vec4(a5.c), lo, acc10); acc11 = fma(vec4(a5.c), hi, acc11);                 \
  acc12 = fma(vec4(a6.c), lo, acc12); acc13 = fma(vec4(a6.c), hi, acc13);                 \
  acc14 = fma(vec4(a7.c), lo, acc14); acc15 = fma(vec4(a7.c), hi, acc15);

#if L_SRC == 2
#define LO(j) lo##j
#define HI(j) hi##j
#else
#define LO(j) load_l(k0 + uint(j), n0)
#define HI(j) load_l(k0 + uint(j), n0 + 4u)
#endif

void main() {
  const uint m0 = gl_WorkGroupID.x * 8u;
  const uint n0 = (gl_WorkGroupID.y * 64u + gl_LocalInvocationID.x) * 8u;
  const uint r0 = m0 * K, r1 = r0 + K, r2 = r1 + K, r3 = r2 + K;
  const uint r4 = r3 + K, r5 = r4 + K, r6 = r5 + K, r7 = r6 + K;
#if W_SRC == 3
  // Rows m0..m0+7 are contiguous in W: 2K vec4s, copied once, one barrier.
  for (uint i = gl_LocalInvocationID.x; i < 2u * K; i += 64u) ws[i] = w4[r0 / 4u + i];
  barrier();
#endif
#if W_SRC == 4
  const vec4 a0 = w4[r0 / 4u], a1 = w4[r1 / 4u], a2 = w4[r2 / 4u], a3 = w4[r3 / 4u];
  const vec4 a4_ = w4[r4 / 4u], a5 = w4[r5 / 4u], a6 = w4[r6 / 4u], a7 = w4[r7 / 4u];
#endif
#if L_SRC == 2
  const vec4 lo0 = l4[n0 / 4u], hi0 = l4[(n0 + 4u) / 4u];
  const vec4 lo1 = l4[(N + n0) / 4u], hi1 = l4[(N + n0 + 4u) / 4u];
  const vec4 lo2 = l4[(2u * N + n0) / 4u], hi2 = l4[(2u * N + n0 + 4u) / 4u];
  const vec4 lo3 = l4[(3u * N + n0) / 4u], hi3 = l4[(3u * N + n0 + 4u) / 4u];
#endif
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);
  vec4 acc4 = vec4(0.0), acc5 = vec4(0.0), acc6 = vec4(0.0), acc7 = vec4(0.0);
  vec4 acc8 = vec4(0.0), acc9 = vec4(0.0), acc10 = vec4(0.0), acc11 = vec4(0.0);
  vec4 acc12 = vec4(0.0), acc13 = vec4(0.0), acc14 = vec4(0.0), acc15 = vec4(0.0);
  for (uint k0 = 0u; k0 < K; k0 += 4u) {
#if W_SRC != 4
    const vec4 a0 = load_w(r0, 0u, k0), a1 = load_w(r1, 1u, k0);
    const vec4 a2 = load_w(r2, 2u, k0), a3 = load_w(r3, 3u, k0);
    const vec4 a4_ = load_w(r4, 4u, k0), a5 = load_w(r5, 5u, k0);
    const vec4 a6 = load_w(r6, 6u, k0), a7 = load_w(r7, 7u, k0);
#endif
    vec4 lo = LO(0), hi = HI(0);
    STEP(x, lo, hi)
    lo = LO(1); hi = HI(1);
    STEP(y, lo, hi)
    lo = LO(2); hi = HI(2);
    STEP(z, lo, hi)
    lo = LO(3); hi = HI(3);
    STEP(w, lo, hi)
  }
  const uint o = (m0 * N + n0) / 4u, s = N / 4u;  // Y row stride in vec4s
  y4[o] = acc0; y4[o + 1u] = acc1;
  y4[o + s] = acc2; y4[o + s + 1u] = acc3;
  y4[o + 2u * s] = acc4; y4[o + 2u * s + 1u] = acc5;
  y4[o + 3u * s] = acc6; y4[o + 3u * s + 1u] = acc7;
  y4[o + 4u * s] = acc8; y4[o + 4u * s + 1u] = acc9;
  y4[o + 5u * s] = acc10; y4[o + 5u * s + 1u] = acc11;
  y4[o + 6u * s] = acc12; y4[o + 6u * s + 1u] = acc13;
  y4[o + 7u * s] = acc14; y4[o + 7u * s + 1u] = acc15;
}
