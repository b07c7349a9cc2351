// Shared body of the CPU-class Conv kernels conv2d_cpu*.comp (included, not
// compiled alone). Each kernel is a variant of conv2d_gemm.comp
// (docs/bundle-format.md, "Kernel variants") with the same bindings, the same
// specialization constants and the same result
//   Y[n][g*M + m][oh][ow] = act(sum_{c,kh,kw} W[g*M + m][c][kh][kw] * X[n][g*CG + c][ih][iw]
//                               + bias[g*M + m] (+ R[...] with HAS_RES))
//   ih = oh*SH - PH + kh*DH, iw = ow*SW - PW + kw*DW (zero outside the image)
// as an implicit GEMM shaped for Mesa lavapipe/llvmpipe: no shared memory, no
// barrier(), inputs read through uniform texel buffers (bundle feature
// texel_bindings; on llvmpipe a texelFetch is a vectorised gather while every
// storage-buffer load is a per-lane loop):
//   binding 0  X  'f' (R32 view: texelFetch(xt, i).x = X element i), or 'v'
//                 (RGBA32 view, elements 4i..4i+3) with CONV_X_VEC4 (W % 4 == 0)
//   binding 1  W  'v' (RGBA32 view: texelFetch(wt, i) = W elements 4i..4i+3)
//   binding 2  B  'f'        binding 3  Y  storage buffer (each output written once)
//   binding 4  R  'f' (residual, HAS_RES)
// The including kernel defines CONV_X_VEC4 (0/1) and CONV_WIDE (0: unrolled
// row groups, for KW in {1, 2, 3, 4, 6}; 1: one pass per row phase, for
// KW = 5, 7, and a plain loop for KW > 7). Both compute any KW correctly.
//
// Each invocation owns 8 output channels (m0..m0+7) x 8 consecutive output
// positions of one output row (ow0..ow0+7, ow0 = 8j; rows are padded to a
// multiple of 8 and the positions past OW are computed but not stored) in
// sixteen named vec4 accumulators (a<i>: positions 0..3, b<i>: 4..7 of
// channel m0+i; never an indexed array: llvmpipe keeps those in memory).
// The reduction k = (c, kh, kw) of length KD = CG*KH*KW walks the filter rows
// r = c*KH + kh in groups of RG rows with RG*KW a multiple of 4, so that a
// group starts on a W texel: per group, every channel's RG*KW weights are
// RG*KW/4 vec4 texels (one more when its W row does not start on a texel)
// whose texel offsets and components are known at pipeline creation. For
// every filter row, the input values at columns iw0 + o, o = kw*DW + p*SW
// (iw0 = ow0*SW - PW), are fetched once and reused for every (kw, p) that
// needs them: the taps are unrolled by macros, all offsets fold at pipeline
// creation and identical fetches are merged by the compiler.
// Zero padding is a select on a clamped (always valid) fetch, so padding is 0
// even next to inf/NaN inputs.
// Invocations: one per (channel block, position block) pair, position blocks
// fastest (a channel block's W rows stay cached while the input streams by),
// 64 to a workgroup, so that layers with few output positions (7x7, 14x14)
// still fill the SIMD lanes (on llvmpipe a texelFetch costs the same whether
// or not its address is uniform, so W rows that differ between lanes cost
// nothing extra); the few invocations past the last pair compute a copy of
// it and store nothing.
// Grid: ceil(ceil(M / 8) * N*OH*ceil(OW / 8) / 64) workgroups split over x
// (<= 65535) and y (pair = (group_y * groups_x + group_x) * 64 + lane),
// GROUPS along z.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform samplerBuffer xt;  // X: 'v' with CONV_X_VEC4, else 'f'
layout(set = 0, binding = 1) uniform samplerBuffer wt;
layout(set = 0, binding = 2) uniform samplerBuffer bt;
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 3) writeonly buffer Y4_ { vec4 y4[]; };
layout(set = 0, binding = 4) uniform samplerBuffer rt;
#include "conv2d_constants.glsl"
#include "common.glsl"

const uint M = K_OUT / GROUPS;  // output channels per group
const uint CG = C / GROUPS;     // input channels per group
const uint KD = CG * KH * KW;   // reduction length (one W row)
const uint RT = CG * KH;        // filter rows (c, kh)
#define OWB ((OW + 7u) / 8u)  // 8-wide position blocks per output row
// Filter rows per group: RG * KW % 4 == 0.
const uint RG = KW % 4u == 0u ? 1u : KW % 2u == 0u ? 2u : 4u;
// Every channel's W row starts at a phase (element index % 4) known at
// pipeline creation: KD % 4 == 0 (phase 0), or M % 4 == 0 (phase of channel
// m0 + i is (i * KD) % 4, since (g*M + m0) % 4 == 0). Otherwise the phase is
// computed at run time (correct, slower: dynamic component selects).
const bool STATIC_PHASE = uint(KD % 4u == 0u) + uint(M % 4u == 0u) != 0u;
#if CONV_X_VEC4
#define XT_LAST (int(N * C * H * W / 4u) - 1)  // last X texel (W % 4 == 0)
#endif

// The hot code below is macros on a few function-scope variables (no helper
// calls, no block-local temporaries): SwiftShader's compiler gives every
// SPIR-V function variable (helper parameters included) its own stack slot
// and aborts on the unrolled body when they exceed its stack size limit.
// X value at column iw0 + o of the current filter row (wlim: W when the row
// lies inside the image, else 0): a select on a clamped fetch, 0 outside
// the image.
#if CONV_X_VEC4
// xr: texel of column ow0*SW (a multiple of 4) of the row; column
// ow0*SW + o - PW is component (o - PW) & 3 of texel xr + ((o - PW) >> 2),
// both known at pipeline creation.
#define LX(o)                                                                                   \
  mix(0.0, texelFetch(xt, clamp(xr + ((int(o) - int(PW)) >> 2), 0, XT_LAST))[(int(o) - int(PW)) & 3], \
      uint(iw0 + int(o)) < wlim)
#else
// xr: index of the row's first element.
#define LX(o) mix(0.0, texelFetch(xt, xr + clamp(iw0 + int(o), 0, int(W) - 1)).x, uint(iw0 + int(o)) < wlim)
#endif
// Input values of output positions p..p+3 (p = 0 or 4) at filter offset
// o = kw*DW + p*SW: columns iw0 + o + j*SW.
#define X4(o) vec4(LX(o), LX((o) + SW), LX((o) + 2u * SW), LX((o) + 3u * SW))
// Weight of channel i at reduction index 4*kt + q: texel tg + (ph + q) / 4,
// component (ph + q) % 4 (tg = t<i> + kt; ph = ph<i>, the phase of the
// channel's W row). Both fold to constants plus tg when ph is static.
#define WK(tg, ph, q) texelFetch(wt, int((tg) + ((ph) + (q)) / 4u))[((ph) + (q)) % 4u]
// Reduction index q with input vectors lo (positions 0..3) and hi (4..7):
// 16 vec4 FMAs.
#define FMA8(q)                                                                                  \
  wv = WK(tg0, ph0, q); a0 = fma(vec4(wv), lo, a0); b0 = fma(vec4(wv), hi, b0);                  \
  wv = WK(tg1, ph1, q); a1 = fma(vec4(wv), lo, a1); b1 = fma(vec4(wv), hi, b1);                  \
  wv = WK(tg2, ph2, q); a2 = fma(vec4(wv), lo, a2); b2 = fma(vec4(wv), hi, b2);                  \
  wv = WK(tg3, ph3, q); a3 = fma(vec4(wv), lo, a3); b3 = fma(vec4(wv), hi, b3);                  \
  wv = WK(tg4, ph4, q); a4 = fma(vec4(wv), lo, a4); b4 = fma(vec4(wv), hi, b4);                  \
  wv = WK(tg5, ph5, q); a5 = fma(vec4(wv), lo, a5); b5 = fma(vec4(wv), hi, b5);                  \
  wv = WK(tg6, ph6, q); a6 = fma(vec4(wv), lo, a6); b6 = fma(vec4(wv), hi, b6);                  \
  wv = WK(tg7, ph7, q); a7 = fma(vec4(wv), lo, a7); b7 = fma(vec4(wv), hi, b7);
// Sets xr and wlim for filter row r (= c*KH + kh) of this invocation.
#if CONV_X_VEC4
#define X_ROW(e) int(((e) + ow0 * SW) / 4u)
#else
#define X_ROW(e) int(e)
#endif
#define SET_ROW(r)                                                                               \
  c = (r) / KH;                                                                                  \
  ih = ih0 + int(((r) - c * KH) * DH);                                                           \
  wlim = uint(ih) < H ? W : 0u;                                                                  \
  xr = X_ROW(xb + c * H * W + uint(clamp(ih, 0, int(H) - 1)) * W);
// Filter tap kw of group row j (reduction index q = j*KW + kw in the group).
#define TAP(j, kw)                                                                               \
  if (uint(kw) < KW) {                                                                           \
    lo = X4(uint(kw) * DW);                                                                      \
    hi = X4(uint(kw) * DW + 4u * SW);                                                            \
    FMA8(uint(j) * KW + uint(kw))                                                                \
  }
// Sets tg<i> for the group that starts at filter row r0 (r0 % RG == 0).
#define SET_GROUP(r0)                                                                            \
  {                                                                                              \
    const uint kt = (r0) * KW / 4u;                                                              \
    tg0 = t0 + kt; tg1 = t1 + kt; tg2 = t2 + kt; tg3 = t3 + kt;                                  \
    tg4 = t4 + kt; tg5 = t5 + kt; tg6 = t6 + kt; tg7 = t7 + kt;                                  \
  }
// Row j of every group (when j < RG), one group after the other.
#define PASS(j)                                                                                  \
  if (uint(j) < RG) {                                                                            \
    for (uint r0 = 0u; r0 + uint(j) < RT; r0 += RG) {                                            \
      SET_GROUP(r0)                                                                              \
      SET_ROW(r0 + uint(j))                                                                      \
      TAP(j, 0) TAP(j, 1) TAP(j, 2) TAP(j, 3) TAP(j, 4) TAP(j, 5) TAP(j, 6)                      \
    }                                                                                            \
  }
// Any filter width (used for KW > 7): one filter row and tap at a time,
// weights fetched with a texel and component computed at run time.
#define ANY_WIDTH                                                                                \
  SET_GROUP(0u)                                                                                  \
  for (uint r = 0u; r < RT; ++r) {                                                               \
    SET_ROW(r)                                                                                   \
    for (uint kw = 0u; kw < KW; ++kw) {                                                          \
      lo = X4(kw * DW);                                                                          \
      hi = X4(kw * DW + 4u * SW);                                                                \
      FMA8(r * KW + kw)                                                                          \
    }                                                                                            \
  }
// Row j of the group that starts at filter row r0 (when j < RG and the row
// exists).
#define ROW(j, taps)                                                                             \
  if (uint(j) < RG) {                                                                            \
    if (uint(RT % RG == 0u) + uint(r0 + uint(j) < RT) != 0u) { /* no test when groups are full */ \
      SET_ROW(r0 + uint(j))                                                                      \
      taps                                                                                       \
    }                                                                                            \
  }

void main() {
  const uint g = gl_WorkGroupID.z;
  const uint blocks = N * OH * OWB;               // position blocks
  const uint pairs = (M + 7u) / 8u * blocks;       // (channel block, position block) pairs
  const uint pair = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
  const uint pc = min(pair, pairs - 1u);
  const uint m0 = pc / blocks * 8u, bc = pc % blocks;
  const uint owb = bc % OWB, t = bc / OWB, oh = t % OH, nb = t / OH;
  const uint ow0 = owb * 8u;
  const int iw0 = int(ow0 * SW) - int(PW), ih0 = int(oh * SH) - int(PH);
  const uint xb = (nb * C + g * CG) * H * W;

  // W row of channel m0 + i (a valid channel: past M, m0 + i - 4 when
  // M % 4 == 0, which keeps the phase, else M - 1): first element e<i>,
  // first texel t<i>, phase ph<i>.
  const uint mlast = M - 1u;
#define WROW(i)                                                                                  \
  const uint e##i = (g * M + (m0 + uint(i) < M ? m0 + uint(i) : M % 4u == 0u ? m0 + uint(i) - 4u : mlast)) * KD; \
  const uint t##i = e##i / 4u;                                                                   \
  const uint ph##i = STATIC_PHASE ? (uint(i) * KD) % 4u : e##i % 4u;
  WROW(0) WROW(1) WROW(2) WROW(3) WROW(4) WROW(5) WROW(6) WROW(7)
#undef WROW

  vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
  vec4 a4 = vec4(0.0), a5 = vec4(0.0), a6 = vec4(0.0), a7 = vec4(0.0);
  vec4 b0 = vec4(0.0), b1 = vec4(0.0), b2 = vec4(0.0), b3 = vec4(0.0);
  vec4 b4 = vec4(0.0), b5 = vec4(0.0), b6 = vec4(0.0), b7 = vec4(0.0);

  vec4 lo, hi;   // input values of positions 0..3 / 4..7 at the current tap
  float wv;      // current weight
  uint c, wlim;  // current filter row: input channel, W or 0 (row outside the image)
  int ih, xr;    // current filter row: input row, index of its first element (clamped)
  uint tg0, tg1, tg2, tg3, tg4, tg5, tg6, tg7;  // first W texel of the current group, per channel
#if !CONV_WIDE
  if (uint(KW <= 4u) + uint(KW == 6u) != 0u) {
    // KW in {1, 2, 3, 4, 6}: groups of RG filter rows (RG*KW % 4 == 0: each
    // group starts on a W texel; RG*KW <= 12 taps), unrolled; the last group
    // may be partial.
    for (uint r0 = 0u; r0 < RT; r0 += RG) {
      SET_GROUP(r0)
      ROW(0, TAP(0, 0) TAP(0, 1) TAP(0, 2) TAP(0, 3) TAP(0, 4) TAP(0, 5))
      ROW(1, TAP(1, 0) TAP(1, 1) TAP(1, 2) TAP(1, 3) TAP(1, 4) TAP(1, 5))
      ROW(2, TAP(2, 0) TAP(2, 1) TAP(2, 2))
      ROW(3, TAP(3, 0) TAP(3, 1) TAP(3, 2))
    }
  } else {
    ANY_WIDTH  // not picked by the toolchain (conv2d_cpu_wide*), correct all the same
  }
#else
  if (KW <= 7u) {
    // KW in {5, 7} (the toolchain's picks; any KW <= 7 works): one unrolled
    // group would be RG*KW = 20 or 28 taps, too large a loop body for the
    // instruction cache. One pass per row j of the groups instead: a loop
    // over the groups with one row (KW taps, whose weights start at the
    // static offset j*KW) in its body.
    PASS(0) PASS(1) PASS(2) PASS(3)
  } else {
    ANY_WIDTH
  }
#endif

  if (pair >= pairs) return;
  // Epilogue (bias, fused residual, activation) and stores, channel by
  // channel: the accumulators shift down so that channel m0 + i is in a0/b0
  // (one call site of apply_act keeps pipeline creation fast).
  for (uint i = 0u; i < 8u; ++i) {
    if (m0 + i >= M) break;
    const uint oc = g * M + m0 + i;
    const float bv = HAS_BIAS != 0u ? texelFetch(bt, int(oc)).x : 0.0;
    const uint yrow = ((nb * K_OUT + oc) * OH + oh) * OW;  // output row
    for (uint h = 0u; h < 2u; ++h) {
      const uint ow = ow0 + 4u * h;
      if (ow >= OW) break;
      const vec4 v = h == 0u ? a0 : b0;
      const uint yi = yrow + ow;
      vec4 r;
      for (uint j = 0u; j < 4u; ++j) {
        float e = v[j] + bv;
        if (HAS_RES != 0u) e += texelFetch(rt, int(min(yi + j, yrow + OW - 1u))).x;
        r[j] = apply_act(e, ACT, ACT_A, ACT_B);
      }
      if (OW % 4u == 0u) {
        y4[yi / 4u] = r;  // ow % 4 == 0 and yrow % 4 == 0
      } else {
        for (uint j = 0u; j < 4u; ++j)
          if (ow + j < OW) y[yi + j] = r[j];
      }
    }
    a0 = a1; a1 = a2; a2 = a3; a3 = a4; a4 = a5; a5 = a6; a6 = a7;
    b0 = b1; b1 = b2; b2 = b3; b3 = b4; b4 = b5; b5 = b6; b6 = b7;
  }
}
