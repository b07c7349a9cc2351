#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class variant of conv2d_gemm.comp for pointwise Convs (docs/bundle-format.md,
// "Kernel variants"): KH = KW = 1, stride 1, no padding (so OH = H, OW = W),
// H*W % 4 == 0 and CG % 4 == 0 (the toolchain picks it only then). Same
// bindings, same specialization constants and same result as conv2d_gemm:
//   Y[n][g*M + m][p] = act(sum_c W[g*M + m][c] * X[n][g*CG + c][p]
//                          + bias[g*M + m] (+ R[n][g*M + m][p] with HAS_RES)),  p = h*W + w
// a GEMM per image, shaped for Mesa lavapipe/llvmpipe: no shared memory, no
// barrier(), inputs read through uniform texel buffers (bundle feature
// texel_bindings, binding_types "vvfsf"; on llvmpipe a texelFetch is a
// vectorised gather while every storage-buffer load is a per-lane loop):
//   binding 0  X  'v' (texelFetch(xt, i) = X elements 4i..4i+3: 4 pixels)
//   binding 1  W  'v' (4 consecutive input channels of one W row)
//   binding 2  B  'f' (texelFetch(bt, i).x = element i)
//   binding 3  Y  storage buffer (written once, as vec4)
//   binding 4  R  'f' (residual, HAS_RES)
// Each invocation owns 8 output channels (m0..m0+7) x 8 consecutive pixels
// of the flattened N*H*W positions (two halves of 4, each inside one image
// since H*W % 4 == 0) in sixteen named vec4 accumulators, and walks the input
// channels 4 at a time: 8 W texels + 8 X texels feed 64 vec4 FMAs.
// Invocations: one per (channel block, pixel block) pair, 64 to a workgroup
// (small images still fill the SIMD lanes); the few invocations past the last
// pair compute a copy of it and store nothing. Channel blocks vary fastest
// when the group's W is small (MB_FASTEST, <= 128 KiB: each X block is then
// read by all channel blocks at about the same time, from cache), else pixel
// blocks do (each channel block's W rows stay cached).
// Grid: ceil(ceil(M / 8) * ceil(N*H*W / 8) / 64) workgroups split over x
// (<= 65535) and y (pair = (group_y * groups_x + group_x) * 64 + lane),
// GROUPS along z.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform samplerBuffer xt;
layout(set = 0, binding = 1) uniform samplerBuffer wt;
layout(set = 0, binding = 2) uniform samplerBuffer bt;
layout(set = 0, binding = 3) writeonly buffer Y4_ { vec4 y4[]; };
layout(set = 0, binding = 4) uniform samplerBuffer rt;
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint H_SC = 1;
#define H PARAM_U(H_SC)
layout(constant_id = 3) const uint W_SC = 1;
#define W PARAM_U(W_SC)
layout(constant_id = 4) const uint K_OUT = 1;
layout(constant_id = 5) const uint OH_SC = 1;
#define OH PARAM_U(OH_SC)
layout(constant_id = 6) const uint OW_SC = 1;
#define OW PARAM_U(OW_SC)
layout(constant_id = 7) const uint KH = 1;
layout(constant_id = 8) const uint KW = 1;
layout(constant_id = 9) const uint SH = 1;
layout(constant_id = 10) const uint SW = 1;
layout(constant_id = 11) const uint PH = 0;
layout(constant_id = 12) const uint PW = 0;
layout(constant_id = 13) const uint DH = 1;
layout(constant_id = 14) const uint DW = 1;
layout(constant_id = 15) const uint GROUPS = 1;
layout(constant_id = 16) const uint HAS_BIAS = 0;
layout(constant_id = 17) const uint ACT = 0;
layout(constant_id = 18) const float ACT_A = 0.0;
layout(constant_id = 19) const float ACT_B = 0.0;
layout(constant_id = 20) const uint HAS_RES = 0;
#include "common.glsl"

const uint M = K_OUT / GROUPS;  // output channels per group
const uint CG = C / GROUPS;     // input channels per group (a multiple of 4)
#define HW (H * W)          // pixels per image (a multiple of 4)
#define HW4 (HW / 4u)       // X texels per channel plane
// Channel blocks vary fastest between invocations when the group's W fits in
// 128 KiB (see main()).
const bool MB_FASTEST = M * CG <= 32768u;

// One input channel: 16 vec4 FMAs with the channel's 8 weights (component
// cc of wv<i>) and its pixels lo (positions 0..3) and hi (4..7).
#define FMA8(cc, lo, hi)                                                                        \
  a0 = fma(vec4(wv0.cc), lo, a0); b0 = fma(vec4(wv0.cc), hi, b0);                                \
  a1 = fma(vec4(wv1.cc), lo, a1); b1 = fma(vec4(wv1.cc), hi, b1);                                \
  a2 = fma(vec4(wv2.cc), lo, a2); b2 = fma(vec4(wv2.cc), hi, b2);                                \
  a3 = fma(vec4(wv3.cc), lo, a3); b3 = fma(vec4(wv3.cc), hi, b3);                                \
  a4 = fma(vec4(wv4.cc), lo, a4); b4 = fma(vec4(wv4.cc), hi, b4);                                \
  a5 = fma(vec4(wv5.cc), lo, a5); b5 = fma(vec4(wv5.cc), hi, b5);                                \
  a6 = fma(vec4(wv6.cc), lo, a6); b6 = fma(vec4(wv6.cc), hi, b6);                                \
  a7 = fma(vec4(wv7.cc), lo, a7); b7 = fma(vec4(wv7.cc), hi, b7);

void main() {
  const uint g = gl_WorkGroupID.z;
  const uint npos = N * HW;
  const uint blocks = (npos + 7u) / 8u;        // pixel blocks
  const uint mblocks = (M + 7u) / 8u;           // channel blocks
  const uint pairs = mblocks * blocks;          // (channel block, pixel block) pairs
  const uint pair = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
  const uint pc = min(pair, pairs - 1u);
  const uint m0 = (MB_FASTEST ? pc % mblocks : pc / blocks) * 8u;
  const uint p0 = (MB_FASTEST ? pc / mblocks : pc % blocks) * 8u;
  // Each half (4 pixels) lies in one image; a half past the end computes the
  // last 4 pixels and stores nothing.
  const uint plo = min(p0, npos - 4u), phi = min(p0 + 4u, npos - 4u);
  const uint nlo = plo / HW, nhi = phi / HW;
  const uint xlo = (nlo * C + g * CG) * HW4 + (plo - nlo * HW) / 4u;  // texel of channel 0
  const uint xhi = (nhi * C + g * CG) * HW4 + (phi - nhi * HW) / 4u;
  // First W texel of channel m0 + i (clamped to a valid channel; KD = CG).
  const uint mlast = M - 1u;
  const uint t0 = (g * M + min(m0, mlast)) * CG / 4u, t1 = (g * M + min(m0 + 1u, mlast)) * CG / 4u;
  const uint t2 = (g * M + min(m0 + 2u, mlast)) * CG / 4u, t3 = (g * M + min(m0 + 3u, mlast)) * CG / 4u;
  const uint t4 = (g * M + min(m0 + 4u, mlast)) * CG / 4u, t5 = (g * M + min(m0 + 5u, mlast)) * CG / 4u;
  const uint t6 = (g * M + min(m0 + 6u, mlast)) * CG / 4u, t7 = (g * M + min(m0 + 7u, mlast)) * CG / 4u;

  vec4 a0 = vec4(0.0), a1 = vec4(0.0), a2 = vec4(0.0), a3 = vec4(0.0);
  vec4 a4 = vec4(0.0), a5 = vec4(0.0), a6 = vec4(0.0), a7 = vec4(0.0);
  vec4 b0 = vec4(0.0), b1 = vec4(0.0), b2 = vec4(0.0), b3 = vec4(0.0);
  vec4 b4 = vec4(0.0), b5 = vec4(0.0), b6 = vec4(0.0), b7 = vec4(0.0);
  for (uint c4 = 0u; c4 < CG / 4u; ++c4) {
    const vec4 wv0 = texelFetch(wt, int(t0 + c4)), wv1 = texelFetch(wt, int(t1 + c4));
    const vec4 wv2 = texelFetch(wt, int(t2 + c4)), wv3 = texelFetch(wt, int(t3 + c4));
    const vec4 wv4 = texelFetch(wt, int(t4 + c4)), wv5 = texelFetch(wt, int(t5 + c4));
    const vec4 wv6 = texelFetch(wt, int(t6 + c4)), wv7 = texelFetch(wt, int(t7 + c4));
    const uint xo = c4 * 4u * HW4;
    vec4 lo = texelFetch(xt, int(xlo + xo)), hi = texelFetch(xt, int(xhi + xo));
    FMA8(x, lo, hi)
    lo = texelFetch(xt, int(xlo + xo + HW4)); hi = texelFetch(xt, int(xhi + xo + HW4));
    FMA8(y, lo, hi)
    lo = texelFetch(xt, int(xlo + xo + 2u * HW4)); hi = texelFetch(xt, int(xhi + xo + 2u * HW4));
    FMA8(z, lo, hi)
    lo = texelFetch(xt, int(xlo + xo + 3u * HW4)); hi = texelFetch(xt, int(xhi + xo + 3u * HW4));
    FMA8(w, lo, hi)
  }

  // Epilogue (bias, fused residual, activation) and vec4 stores, channel by
  // channel: the accumulators shift down so that channel m0 + i is in a0/b0
  // (one call site of apply_act keeps pipeline creation fast). Output texel
  // of pixel p, channel oc: ((n*K_OUT + oc)*HW + p % HW) / 4.
  if (pair >= pairs) return;
  const bool lo_ok = p0 < npos, hi_ok = p0 + 4u < npos;
  const uint ylo = (nlo * K_OUT + g * M + m0) * HW4 + (plo - nlo * HW) / 4u;
  const uint yhi = (nhi * K_OUT + g * M + m0) * HW4 + (phi - nhi * HW) / 4u;
  for (uint i = 0u; i < 8u; ++i) {
    if (m0 + i >= M) break;
    const float bv = HAS_BIAS != 0u ? texelFetch(bt, int(g * M + m0 + i)).x : 0.0;
    for (uint h = 0u; h < 2u; ++h) {
      if (!(h == 0u ? lo_ok : hi_ok)) break;
      const uint yt = (h == 0u ? ylo : yhi) + i * HW4;
      const vec4 v = h == 0u ? a0 : b0;
      vec4 r;
      for (uint j = 0u; j < 4u; ++j) {
        float e = v[j] + bv;
        if (HAS_RES != 0u) e += texelFetch(rt, int(yt * 4u + j)).x;
        r[j] = apply_act(e, ACT, ACT_A, ACT_B);
      }
      y4[yt] = r;
    }
    a0 = a1; a1 = a2; a2 = a3; a3 = a4; a4 = a5; a5 = a6; a6 = a7;
    b0 = b1; b1 = b2; b2 = b3; b3 = b4; b4 = b5; b5 = b6; b6 = b7;
  }
}
