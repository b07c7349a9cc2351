#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class variant of conv2d_gemm.comp (docs/bundle-format.md, "Kernel
// variants"): same bindings, same specialization constants, same result
//   Y[n][g*M + m][oh][ow] = act(sum_{c,kh,kw} W[g*M + m][c][kh][kw] * X[n][g*CG + c][ih][iw]
//                               + bias[g*M + m] (+ R[...] with HAS_RES))
// as an implicit GEMM without shared memory or barrier() (see gemm_cpu.comp).
// Each invocation owns 4 output channels x 4 consecutive output positions
// (flattened over N*OH*OW) in four named vec4 accumulators (never an indexed
// array: llvmpipe keeps indexed local arrays in memory) and walks
// k = (c, kh, kw) once; zero padding is a select on a clamped (always valid)
// load. On llvmpipe every storage-buffer load instruction is a loop over the
// SIMD lanes, so loads are minimised: a pointwise Conv (1x1, stride 1, no
// padding) reads X and W as vec4 (four positions, four input channels);
// otherwise, with unit stride and dilation along W and the block inside one
// output row, the 4 + KW - 1 input values of a (c, kh) row are read once and
// reused for every kw (KW <= 5).
// Grid: (ceil(M / 4), ceil(N*OH*OW / 256), GROUPS).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer W_ { float w[]; };
layout(set = 0, binding = 2) readonly buffer B_ { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 4) readonly buffer R_ { float res[]; };
// X and W seen as vec4 arrays (the pointwise path below).
layout(set = 0, binding = 0) readonly buffer X4_ { vec4 x4[]; };
layout(set = 0, binding = 1) readonly buffer W4_ { vec4 w4[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint H = 1;
layout(constant_id = 3) const uint W = 1;
layout(constant_id = 4) const uint K_OUT = 1;
layout(constant_id = 5) const uint OH = 1;
layout(constant_id = 6) const uint OW = 1;
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
// X[xrow + iw] (zero outside [0, W) or when !row_in).
float load_x(uint xrow, int iw, bool row_in) {
  const float t = x[xrow + uint(clamp(iw, 0, int(W) - 1))];
  return (row_in && iw >= 0 && iw < int(W)) ? t : 0.0;
}

// X[xrow + iw] for iw in [iw0, iw0 + 4).
vec4 load_x4(uint xrow, int iw0, bool row_in) {
  return vec4(load_x(xrow, iw0, row_in), load_x(xrow, iw0 + 1, row_in), load_x(xrow, iw0 + 2, row_in),
              load_x(xrow, iw0 + 3, row_in));
}

void store_row(uint m, uint col0, vec4 v) {
  const uint M = K_OUT / GROUPS;
  if (m >= M) return;
  const uint oc = gl_WorkGroupID.z * M + m;
  const float bv = HAS_BIAS != 0u ? bias[oc] : 0.0;
  for (uint j = 0u; j < 4u; ++j) {
    const uint col = col0 + j;
    if (col >= N * OH * OW) return;
    const uint ow = col % OW; const uint t = col / OW; const uint oh = t % OH; const uint nb = t / OH;
    const uint yi = ((nb * K_OUT + oc) * OH + oh) * OW + ow;
    float r = v[j] + bv;
    if (HAS_RES != 0u) r += res[yi];
    y[yi] = apply_act(r, ACT, ACT_A, ACT_B);
  }
}

void main() {
  const uint M = K_OUT / GROUPS;
  const uint CG = C / GROUPS;
  const uint KD = CG * KH * KW;
  const uint NCOL = N * OH * OW;
  const uint HW = H * W;
  // Folded at pipeline creation (uint products, not &&: glslang mis-emits &&
  // chains of specialization constants).
  const bool pointwise = uint(KH == 1u) * uint(KW == 1u) * uint(SH == 1u) * uint(SW == 1u) * uint(PH == 0u) *
                         uint(PW == 0u) * uint(HW % 4u == 0u) * uint(CG % 4u == 0u) != 0u;
  const bool row = uint(SW == 1u) * uint(DW == 1u) * uint(OW % 4u == 0u) * uint(KW <= 5u) != 0u;
  const uint g = gl_WorkGroupID.z;
  const uint m0 = gl_WorkGroupID.x * 4u;
  const uint col0 = (gl_WorkGroupID.y * 64u + gl_LocalInvocationID.x) * 4u;
  const uint ml = M - 1u;
  const uint w0 = (g * M + min(m0, ml)) * KD, w1 = (g * M + min(m0 + 1u, ml)) * KD;
  const uint w2 = (g * M + min(m0 + 2u, ml)) * KD, w3 = (g * M + min(m0 + 3u, ml)) * KD;
  vec4 acc0 = vec4(0.0), acc1 = vec4(0.0), acc2 = vec4(0.0), acc3 = vec4(0.0);

  if (pointwise) {
    // Positions col0..col0+3 are consecutive pixels of one image (HW % 4 == 0);
    // invocations past NCOL read the last block and store nothing.
    const uint cb = min(col0, NCOL - 4u);
    const uint xb = (cb / HW * C + g * CG) * HW + cb % HW;
    for (uint c0 = 0u; c0 < CG; c0 += 4u) {
      const vec4 a0 = w4[(w0 + c0) / 4u], a1 = w4[(w1 + c0) / 4u];  // KD = CG, CG % 4 == 0
      const vec4 a2 = w4[(w2 + c0) / 4u], a3 = w4[(w3 + c0) / 4u];
      vec4 xv = x4[(xb + c0 * HW) / 4u];
      acc0 = fma(vec4(a0.x), xv, acc0); acc1 = fma(vec4(a1.x), xv, acc1);
      acc2 = fma(vec4(a2.x), xv, acc2); acc3 = fma(vec4(a3.x), xv, acc3);
      xv = x4[(xb + (c0 + 1u) * HW) / 4u];
      acc0 = fma(vec4(a0.y), xv, acc0); acc1 = fma(vec4(a1.y), xv, acc1);
      acc2 = fma(vec4(a2.y), xv, acc2); acc3 = fma(vec4(a3.y), xv, acc3);
      xv = x4[(xb + (c0 + 2u) * HW) / 4u];
      acc0 = fma(vec4(a0.z), xv, acc0); acc1 = fma(vec4(a1.z), xv, acc1);
      acc2 = fma(vec4(a2.z), xv, acc2); acc3 = fma(vec4(a3.z), xv, acc3);
      xv = x4[(xb + (c0 + 3u) * HW) / 4u];
      acc0 = fma(vec4(a0.w), xv, acc0); acc1 = fma(vec4(a1.w), xv, acc1);
      acc2 = fma(vec4(a2.w), xv, acc2); acc3 = fma(vec4(a3.w), xv, acc3);
    }
  } else if (row) {
    // The block is 4 consecutive ow of one output row (OW % 4 == 0).
    const uint col = min(col0, NCOL - 4u);
    const uint ow = col % OW; const uint t = col / OW; const uint oh = t % OH; const uint nb = t / OH;
    const int ih0 = int(oh * SH) - int(PH), iw0 = int(ow) - int(PW);
    const uint xb = (nb * C + g * CG) * HW;
    uint k = 0u;
    for (uint c = 0u; c < CG; ++c) {
      for (uint kh = 0u; kh < KH; ++kh, k += KW) {
        const int ih = ih0 + int(kh * DH);
        const bool row_in = ih >= 0 && ih < int(H);
        const uint xr = xb + c * HW + uint(clamp(ih, 0, int(H) - 1)) * W;
        const vec4 s0 = load_x4(xr, iw0, row_in);
        const vec4 s1 = KW > 1u ? load_x4(xr, iw0 + 4, row_in) : vec4(0.0);
        for (uint kw = 0u; kw < KW; ++kw) {
          const vec4 xv = kw == 0u ? s0 : kw == 1u ? vec4(s0.yzw, s1.x) : kw == 2u ? vec4(s0.zw, s1.xy)
                        : kw == 3u ? vec4(s0.w, s1.xyz) : s1;
          const uint kk = k + kw;
          acc0 = fma(vec4(w[w0 + kk]), xv, acc0); acc1 = fma(vec4(w[w1 + kk]), xv, acc1);
          acc2 = fma(vec4(w[w2 + kk]), xv, acc2); acc3 = fma(vec4(w[w3 + kk]), xv, acc3);
        }
      }
    }
  } else {
    ivec4 ih0, iw0;
    uvec4 xb;
    for (uint j = 0u; j < 4u; ++j) {
      const uint col = min(col0 + j, NCOL - 1u);
      const uint ow = col % OW; const uint t = col / OW; const uint oh = t % OH; const uint nb = t / OH;
      ih0[j] = int(oh * SH) - int(PH);
      iw0[j] = int(ow * SW) - int(PW);
      xb[j] = (nb * C + g * CG) * HW;
    }
    uint k = 0u;
    for (uint c = 0u; c < CG; ++c) {
      for (uint kh = 0u; kh < KH; ++kh) {
        const ivec4 ih = ih0 + int(kh * DH);
        const bvec4 row_in = bvec4(uvec4(greaterThanEqual(ih, ivec4(0))) * uvec4(lessThan(ih, ivec4(int(H)))));
        const uvec4 xr = xb + c * HW + uvec4(clamp(ih, ivec4(0), ivec4(int(H) - 1))) * W;
        for (uint kw = 0u; kw < KW; ++kw, ++k) {
          const ivec4 iw = iw0 + int(kw * DW);
          const uvec4 xi = xr + uvec4(clamp(iw, ivec4(0), ivec4(int(W) - 1)));
          vec4 xv = vec4(x[xi.x], x[xi.y], x[xi.z], x[xi.w]);
          const uvec4 in4 = uvec4(row_in) * uvec4(greaterThanEqual(iw, ivec4(0))) * uvec4(lessThan(iw, ivec4(int(W))));
          xv = mix(vec4(0.0), xv, notEqual(in4, uvec4(0u)));  // a select: padding is 0 even next to inf
          acc0 = fma(vec4(w[w0 + k]), xv, acc0); acc1 = fma(vec4(w[w1 + k]), xv, acc1);
          acc2 = fma(vec4(w[w2 + k]), xv, acc2); acc3 = fma(vec4(w[w3 + k]), xv, acc3);
        }
      }
    }
  }
  if (col0 >= NCOL) return;
  store_row(m0, col0, acc0);
  store_row(m0 + 1u, col0, acc1);
  store_row(m0 + 2u, col0, acc2);
  store_row(m0 + 3u, col0, acc3);
}
