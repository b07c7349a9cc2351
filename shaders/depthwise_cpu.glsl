// CPU-class variant of depthwise_conv2d.comp (docs/bundle-format.md, "Kernel
// variants"), included by depthwise_cpu.comp (X_VEC4 0) and
// depthwise_cpu_xv.comp (X_VEC4 1). Same bindings, same specialization
// constants, same result:
//   Y[n][c][oh][ow] = act(bias[c] + sum_{kh,kw} W[c][0][kh][kw] * X[n][c][ih][iw]
//                         + (HAS_RES ? R[n][c][oh][ow] : 0)),
//   ih = oh*SH - PH + kh*DH, iw = ow*SW - PW + kw*DW (zero outside X),
// shaped for devices that run a workgroup as SIMD lanes of a CPU thread
// (Mesa lavapipe/llvmpipe): no shared memory, no barrier().
//
// W, the bias and R are read through R32_SFLOAT uniform texel buffer views,
// X through an R32_SFLOAT view (X_VEC4 0) or an R32G32B32A32_SFLOAT view
// (X_VEC4 1: one fetch returns four consecutive elements of a row): on
// llvmpipe a storage-buffer load is a loop over the SIMD lanes with a branch
// per lane, a texel fetch a gather (see gemm_cpu.glsl). Y stays a storage
// buffer, written once per element (vec4 stores when OW % 4 == 0).
//
// Each invocation computes BW consecutive outputs ow0..ow0+BW-1 of one
// (n, c, oh) row (BW = 16 at stride 1 when OW > 8, else 8), in named vec4
// accumulators. Per kernel row kh it fetches the input row segment those
// outputs need once and reuses it for every kw, sliding a register window
// along the row:
//   X_VEC4 (stride 1, W % 4 == 0; the toolchain checks the segment fits in
//            six texels): the segment's aligned texels r0..r5, each entirely
//            inside or outside the row; shifted by the pad remainder, then by
//            DW per kw; output j uses component j of r0..r3.
//   SW == 1: window X[p .. p+BW-1] (p = ow0 - PW + kw*DW); moving to the next
//            kw shifts it by DW, one fetch per shift: BW + (KW-1)*DW fetches
//            per kh instead of BW*KW.
//   SW == 2: even slots E_j = X[p + 2j] (j < 8) and odd slots O_j = X[p + 2j + 1]
//            (j < 7); output j uses E_j; a shift by one swaps them and fetches
//            one value: 15 + (KW-1)*DW fetches per kh (used when below 8*KW).
//   otherwise: 8 fetches per tap.
// Each of the channel's KH*KW weights is fetched once per invocation.
// Invocations are numbered row-major over (n, c, oh, ow0 / BW) and spread
// over 64-wide workgroups, so small planes (7 x 7) still fill every lane.
// Grid: (gx, gy, 1) with gx * gy >= ceil(N*C*OH*ceil(OW/BW) / 64), gx <= 65535.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform samplerBuffer x_t;
layout(set = 0, binding = 1) uniform samplerBuffer w_t;
layout(set = 0, binding = 2) uniform samplerBuffer bias_t;
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 3) writeonly buffer Y4_ { vec4 y4[]; };
layout(set = 0, binding = 4) uniform samplerBuffer res_t;
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint H_SC = 1;
#define H PARAM_U(H_SC)
layout(constant_id = 3) const uint W_SC = 1;
#define W PARAM_U(W_SC)
layout(constant_id = 4) const uint OH_SC = 1;
#define OH PARAM_U(OH_SC)
layout(constant_id = 5) const uint OW_SC = 1;
#define OW PARAM_U(OW_SC)
layout(constant_id = 6) const uint KH = 1;
layout(constant_id = 7) const uint KW = 1;
layout(constant_id = 8) const uint SH = 1;
layout(constant_id = 9) const uint SW = 1;
layout(constant_id = 10) const uint PH = 0;
layout(constant_id = 11) const uint PW = 0;
layout(constant_id = 12) const uint DH = 1;
layout(constant_id = 13) const uint DW = 1;
layout(constant_id = 14) const uint HAS_BIAS = 0;
layout(constant_id = 15) const uint ACT = 0;
layout(constant_id = 16) const float ACT_A = 0.0;
layout(constant_id = 17) const float ACT_B = 0.0;
layout(constant_id = 18) const uint HAS_RES = 0;
#include "common.glsl"

// Outputs per invocation (folded at pipeline creation; uint products, not
// &&: glslang mis-emits && chains of specialization constants). Must match
// the depthwise branch of Conv in src/toolchain/lower/lower.cpp. A shape-
// dependent OW (parameter-buffer marker, > 8) takes 16: the lowering chooses 16
// only when every OW of the range is > 8, and when it chose 8 the grid has
// enough blocks for 16 too (the surplus invocations return at once).
const uint BW = uint(SW == 1u) * uint(OW_SC > 8u) != 0u ? 16u : 8u;
// Which window (X_VEC4 0).
const bool WINDOW1 = uint(SW == 1u) * uint(BW + (KW - 1u) * DW <= BW * KW) != 0u;
const bool WINDOW2 = uint(SW == 2u) * uint(15u + (KW - 1u) * DW < 8u * KW) != 0u;
// X_VEC4: the segment starts PA = PW rounded up to 4 before ow0 (texel
// aligned); output 0 of the window sits PA - PW elements into it.
const uint PA = (PW + 3u) / 4u * 4u;
const uint SKIP = PA - PW;

float fetch1(samplerBuffer t, uint i) { return texelFetch(t, int(i)).x; }

// X[row][iw], 0 outside 0 <= iw < W (the fetch index is clamped into the row).
float x_at(uint row, int iw) {
  const float v = fetch1(x_t, row + uint(clamp(iw, 0, int(W) - 1)));
  return uint(iw) < W ? v : 0.0;
}

// X[row][q..q+3] (q % 4 == 0, W % 4 == 0): all inside the row or all 0.
vec4 x4_at(uint row, int q) {
  const vec4 v = texelFetch(x_t, int((row + uint(clamp(q, 0, int(W) - 4))) / 4u));
  return uint(q) < W ? v : vec4(0.0);
}

vec4 act4(vec4 v) { return apply_act4(v, ACT, ACT_A, ACT_B); }

// Y[o + 4q .. o + 4q + 3] for the outputs ow0 + 4q + i < OW.
void store4(uint o, uint ow0, uint q, vec4 v) {
  const uint first = ow0 + 4u * q;
  if (first >= OW) return;
  if (OW % 4u == 0u) {  // o % 4 == 0 and first + 3 < OW
    y4[(o + 4u * q) / 4u] = v;
  } else {
    y[o + 4u * q] = v.x;
    if (first + 1u < OW) y[o + 4u * q + 1u] = v.y;
    if (first + 2u < OW) y[o + 4u * q + 2u] = v.z;
    if (first + 3u < OW) y[o + 4u * q + 3u] = v.w;
  }
}

// R[o + 4q .. o + 4q + 3] (indices clamped to the row's last output).
vec4 res4(uint o, uint ow0, uint q) {
  const uint l = OW - 1u - ow0;  // last valid offset in this row
  const uint b = 4u * q;
  return vec4(fetch1(res_t, o + min(b, l)), fetch1(res_t, o + min(b + 1u, l)), fetch1(res_t, o + min(b + 2u, l)),
              fetch1(res_t, o + min(b + 3u, l)));
}

void main() {
  const uint OWB = (OW + BW - 1u) / BW;
  const uint blk = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 64u + gl_LocalInvocationID.x;
  if (blk >= N * C * OH * OWB) return;
  const uint t_rt = div_rt(blk, OWB), t_c = blk / OWB;  // no integer division by a run-time OWB
  const uint t = param_is_slot(OW_SC) ? t_rt : t_c;
  const uint ow0 = (blk - t * OWB) * BW;
  const uint nc = div_p(t, OH_SC), oh = t - nc * OH, c = nc % C;
  const float b0 = HAS_BIAS != 0u ? fetch1(bias_t, c) : 0.0;
  // Outputs ow0 + 4q .. ow0 + 4q + 3 in a<q> (a2, a3 only when BW == 16).
  vec4 a0 = vec4(b0), a1 = vec4(b0), a2 = vec4(b0), a3 = vec4(b0);
  const int iw0 = int(ow0 * SW) - int(PW);
  for (uint kh = 0u; kh < KH; ++kh) {
    const int ih = int(oh * SH + kh * DH) - int(PH);
    if (uint(ih) >= H) continue;
    const uint row = (nc * H + uint(ih)) * W;
    const uint wrow = (c * KH + kh) * KW;
#if X_VEC4
    // Texels r0..r5 = X[row][q0 .. q0+23], q0 = ow0 - PA; those past the
    // segment the taps need are not fetched.
    const int q0 = int(ow0) - int(PA);
    const uint span = SKIP + BW + (KW - 1u) * DW;  // elements the taps need
    vec4 r0 = x4_at(row, q0), r1 = x4_at(row, q0 + 4), r2 = vec4(0.0), r3 = vec4(0.0);
    vec4 r4 = vec4(0.0), r5 = vec4(0.0);
    if (span > 8u) r2 = x4_at(row, q0 + 8);
    if (span > 12u) r3 = x4_at(row, q0 + 12);
    if (span > 16u) r4 = x4_at(row, q0 + 16);
    if (span > 20u) r5 = x4_at(row, q0 + 20);
#define SHIFT1()                                                                           \
  r0 = vec4(r0.yzw, r1.x); r1 = vec4(r1.yzw, r2.x); r2 = vec4(r2.yzw, r3.x);                \
  r3 = vec4(r3.yzw, r4.x); r4 = vec4(r4.yzw, r5.x); r5 = vec4(r5.yzw, 0.0);
    for (uint s = 0u; s < SKIP; ++s) { SHIFT1() }
    for (uint kw = 0u; kw < KW; ++kw) {
      const float wt = fetch1(w_t, wrow + kw);
      a0 += wt * r0;
      a1 += wt * r1;
      if (BW == 16u) {
        a2 += wt * r2;
        a3 += wt * r3;
      }
      if (kw + 1u < KW)
        for (uint s = 0u; s < DW; ++s) { SHIFT1() }
    }
#undef SHIFT1
#else
    if (WINDOW1) {
      // v0..v3 = X[row][p .. p+15] (v2, v3 only when BW == 16).
      int p = iw0;
      vec4 v0 = vec4(x_at(row, p), x_at(row, p + 1), x_at(row, p + 2), x_at(row, p + 3));
      vec4 v1 = vec4(x_at(row, p + 4), x_at(row, p + 5), x_at(row, p + 6), x_at(row, p + 7));
      vec4 v2 = vec4(0.0), v3 = vec4(0.0);
      if (BW == 16u) {
        v2 = vec4(x_at(row, p + 8), x_at(row, p + 9), x_at(row, p + 10), x_at(row, p + 11));
        v3 = vec4(x_at(row, p + 12), x_at(row, p + 13), x_at(row, p + 14), x_at(row, p + 15));
      }
      for (uint kw = 0u; kw < KW; ++kw) {
        const float wt = fetch1(w_t, wrow + kw);
        a0 += wt * v0;
        a1 += wt * v1;
        if (BW == 16u) {
          a2 += wt * v2;
          a3 += wt * v3;
        }
        if (kw + 1u < KW)
          for (uint s = 0u; s < DW; ++s) {
            ++p;
            v0 = vec4(v0.yzw, v1.x);
            if (BW == 16u) {
              v1 = vec4(v1.yzw, v2.x);
              v2 = vec4(v2.yzw, v3.x);
              v3 = vec4(v3.yzw, x_at(row, p + 15));
            } else {
              v1 = vec4(v1.yzw, x_at(row, p + 7));
            }
          }
      }
    } else if (WINDOW2) {  // BW == 8
      int p = iw0;
      vec4 ev_lo = vec4(x_at(row, p), x_at(row, p + 2), x_at(row, p + 4), x_at(row, p + 6));
      vec4 ev_hi = vec4(x_at(row, p + 8), x_at(row, p + 10), x_at(row, p + 12), x_at(row, p + 14));
      vec4 od_lo = vec4(x_at(row, p + 1), x_at(row, p + 3), x_at(row, p + 5), x_at(row, p + 7));
      vec4 od_hi = vec4(x_at(row, p + 9), x_at(row, p + 11), x_at(row, p + 13), 0.0);  // O_4..O_6
      for (uint kw = 0u; kw < KW; ++kw) {
        const float wt = fetch1(w_t, wrow + kw);
        a0 += wt * ev_lo;
        a1 += wt * ev_hi;
        if (kw + 1u < KW)
          for (uint s = 0u; s < DW; ++s) {
            ++p;  // E' = O (+ one new value), O' = E shifted by one
            const vec4 nl = vec4(ev_lo.yzw, ev_hi.x), nh = vec4(ev_hi.yzw, 0.0);
            ev_lo = od_lo;
            ev_hi = vec4(od_hi.xyz, x_at(row, p + 14));
            od_lo = nl;
            od_hi = nh;
          }
      }
    } else {  // BW == 8
      for (uint kw = 0u; kw < KW; ++kw) {
        const float wt = fetch1(w_t, wrow + kw);
        const int q = iw0 + int(kw * DW), s = int(SW);
        a0 += wt * vec4(x_at(row, q), x_at(row, q + s), x_at(row, q + 2 * s), x_at(row, q + 3 * s));
        a1 += wt * vec4(x_at(row, q + 4 * s), x_at(row, q + 5 * s), x_at(row, q + 6 * s), x_at(row, q + 7 * s));
      }
    }
#endif
  }
  const uint o = (nc * OH + oh) * OW + ow0;  // Y / R index of output ow0
  if (HAS_RES != 0u) {
    a0 += res4(o, ow0, 0u);
    a1 += res4(o, ow0, 1u);
    if (BW == 16u) {
      a2 += res4(o, ow0, 2u);
      a3 += res4(o, ow0, 3u);
    }
  }
  for (uint q = 0u; q < BW / 4u; ++q) {  // a<q> shifting down into a0
    store4(o, ow0, q, act4(a0));
    a0 = a1; a1 = a2; a2 = a3;
  }
}
