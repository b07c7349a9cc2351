#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class variant of conv_transpose2d.comp (bundle features kernel_variants
// and texel_bindings, docs/bundle-format.md) for the non-overlapping
// ConvTranspose of upsampling paths: kernel == stride with KH * KW == 4 taps
// (2 x 2 stride 2 in FPN / U-Net decoders), no padding, dilation 1, group 1,
// no output_padding (OH = IH * KH, OW = IW * KW). Each output pixel then takes
// exactly one input pixel and one kernel tap:
//   Y[n][m][iy*KH + ky][ix*KW + kx] = act(B[m] + sum_c X[n][c][iy][ix] * W[c][m][ky][kx])
// Same bindings and specialization constants as conv_transpose2d; binding
// types "fvfs": X and B through R32 texel views, W through an RGBA32 view so
// one texelFetch returns the 4 taps of W[c][m]. Each invocation owns 4 input
// positions (flattened over N*IH*IW) x 4 output channels x 4 taps in sixteen
// named vec4 accumulators (4 positions each); per input channel it fetches 4
// scalars of X and 4 vec4 of W for 16 vec4 FMAs. No shared memory, no
// barrier. Grid: (ceil(N*IH*IW / 256), ceil(M / 4), 1), 64 lanes.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) uniform samplerBuffer x_t;
layout(set = 0, binding = 1) uniform samplerBuffer w_t;
layout(set = 0, binding = 2) uniform samplerBuffer bias_t;
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint IH_SC = 1;
#define IH PARAM_U(IH_SC)
layout(constant_id = 3) const uint IW_SC = 1;
#define IW PARAM_U(IW_SC)
layout(constant_id = 4) const uint M = 1;
layout(constant_id = 5) const uint OH_SC = 1;
#define OH PARAM_U(OH_SC)
layout(constant_id = 6) const uint OW_SC = 1;
#define OW PARAM_U(OW_SC)
layout(constant_id = 7) const uint KH = 1;
layout(constant_id = 8) const uint KW = 1;
layout(constant_id = 9) const uint SH = 1;
layout(constant_id = 10) const uint SW = 1;
layout(constant_id = 11) const uint PT = 0;
layout(constant_id = 12) const uint PL = 0;
layout(constant_id = 13) const uint DH = 1;
layout(constant_id = 14) const uint DW = 1;
layout(constant_id = 15) const uint GROUP = 1;
layout(constant_id = 16) const uint HAS_BIAS = 0;
layout(constant_id = 17) const uint ACT = 0;
layout(constant_id = 18) const float ACT_A = 0.0;
layout(constant_id = 19) const float ACT_B = 0.0;
#include "common.glsl"

float load_x(uint i) { return texelFetch(x_t, int(i)).x; }

// Output channel m, taps 0..3 (t = ky * KW + kx), positions p0..p0+3.
void store_channel(uint m, uint p0, vec4 t0, vec4 t1, vec4 t2, vec4 t3) {
  if (m >= M) return;
  const float bv = HAS_BIAS != 0u ? texelFetch(bias_t, int(m)).x : 0.0;
  const uint HW = IH * IW;
  for (uint q = 0u; q < 4u; ++q) {
    const uint p = p0 + q;
    if (p >= N * HW) return;
    const uint nb = p / HW, iy = (p % HW) / IW, ix = p % IW;
    const uint base = (nb * M + m) * OH;
    const vec4 v = vec4(t0[q], t1[q], t2[q], t3[q]);
    for (uint t = 0u; t < 4u; ++t) {
      const uint oy = iy * KH + t / KW, ox = ix * KW + t % KW;
      y[(base + oy) * OW + ox] = apply_act(v[t] + bv, ACT, ACT_A, ACT_B);
    }
  }
}

void main() {
  const uint HW = IH * IW, P = N * HW;
  const uint p0 = (gl_WorkGroupID.x * 64u + gl_LocalInvocationID.x) * 4u;
  if (p0 >= P) return;
  const uint m0 = gl_WorkGroupID.y * 4u;
  // X index of channel 0 for positions p0..p0+3 (clamped: read, never stored).
  const uvec4 pp = min(uvec4(p0, p0 + 1u, p0 + 2u, p0 + 3u), uvec4(P - 1u));
  const uvec4 xb = (pp / HW) * (C * HW) + pp % HW;
  // W[c][m] texel (4 taps) = c * M + m; channels past M read channel M - 1.
  const uint ml = M - 1u;
  const uint w0 = min(m0, ml), w1 = min(m0 + 1u, ml), w2 = min(m0 + 2u, ml), w3 = min(m0 + 3u, ml);
  vec4 a00 = vec4(0.0), a01 = vec4(0.0), a02 = vec4(0.0), a03 = vec4(0.0);
  vec4 a10 = vec4(0.0), a11 = vec4(0.0), a12 = vec4(0.0), a13 = vec4(0.0);
  vec4 a20 = vec4(0.0), a21 = vec4(0.0), a22 = vec4(0.0), a23 = vec4(0.0);
  vec4 a30 = vec4(0.0), a31 = vec4(0.0), a32 = vec4(0.0), a33 = vec4(0.0);
  for (uint c = 0u; c < C; ++c) {
    const uint xo = c * HW;
    const vec4 xv = vec4(load_x(xb.x + xo), load_x(xb.y + xo), load_x(xb.z + xo), load_x(xb.w + xo));
    const int wc = int(c * M);
    const vec4 k0 = texelFetch(w_t, wc + int(w0)), k1 = texelFetch(w_t, wc + int(w1));
    const vec4 k2 = texelFetch(w_t, wc + int(w2)), k3 = texelFetch(w_t, wc + int(w3));
    a00 = fma(vec4(k0.x), xv, a00); a01 = fma(vec4(k0.y), xv, a01); a02 = fma(vec4(k0.z), xv, a02); a03 = fma(vec4(k0.w), xv, a03);
    a10 = fma(vec4(k1.x), xv, a10); a11 = fma(vec4(k1.y), xv, a11); a12 = fma(vec4(k1.z), xv, a12); a13 = fma(vec4(k1.w), xv, a13);
    a20 = fma(vec4(k2.x), xv, a20); a21 = fma(vec4(k2.y), xv, a21); a22 = fma(vec4(k2.z), xv, a22); a23 = fma(vec4(k2.w), xv, a23);
    a30 = fma(vec4(k3.x), xv, a30); a31 = fma(vec4(k3.y), xv, a31); a32 = fma(vec4(k3.z), xv, a32); a33 = fma(vec4(k3.w), xv, a33);
  }
  store_channel(m0, p0, a00, a01, a02, a03);
  store_channel(m0 + 1u, p0, a10, a11, a12, a13);
  store_channel(m0 + 2u, p0, a20, a21, a22, a23);
  store_channel(m0 + 3u, p0, a30, a31, a32, a33);
}
