// Body of conv_transpose2d.comp and conv_transpose2d_cpu.comp (included after #version).
// ONNX ConvTranspose (2-D, NCHW), direct form: one invocation per output
// element gathers the input pixels whose scattered window covers it.
// W is [C, M/GROUP, KH, KW]; Y is [N, M, OH, OW]; optional bias B[M];
// fused activation.
layout(local_size_x = 256) in;
#ifdef TEXEL_READS
layout(set = 0, binding = 0) uniform samplerBuffer x_t;
#define LOAD_X(i) texelFetch(x_t, int(i)).x
layout(set = 0, binding = 1) uniform samplerBuffer w_t;
#define LOAD_W(i) texelFetch(w_t, int(i)).x
layout(set = 0, binding = 2) uniform samplerBuffer bias_t;
#define LOAD_BIAS(i) texelFetch(bias_t, int(i)).x
// binding types "fffs"
#else
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
#define LOAD_X(i) x[i]
layout(set = 0, binding = 1) readonly buffer W_ { float w[]; };
#define LOAD_W(i) w[i]
layout(set = 0, binding = 2) readonly buffer B_ { float bias[]; };
#define LOAD_BIAS(i) bias[i]
#endif
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
void main() {
  uint i = linear_index_256();
  if (i >= N * M * OH * OW) return;
  uint ox = i % OW;
  uint oy = (i / OW) % OH;
  uint m = (i / (OW * OH)) % M;
  uint n = i / (OW * OH * M);
  uint mg = M / GROUP, cg = C / GROUP;
  uint g = m / mg, mo = m % mg;
  float acc = HAS_BIAS != 0u ? LOAD_BIAS(m) : 0.0;
  for (uint ky = 0u; ky < KH; ++ky) {
    int ty = int(oy + PT) - int(ky * DH);
    if (ty < 0 || (uint(ty) % SH) != 0u) continue;
    uint iy = uint(ty) / SH;
    if (iy >= IH) continue;
    for (uint kx = 0u; kx < KW; ++kx) {
      int tx = int(ox + PL) - int(kx * DW);
      if (tx < 0 || (uint(tx) % SW) != 0u) continue;
      uint ix = uint(tx) / SW;
      if (ix >= IW) continue;
      for (uint c = 0u; c < cg; ++c) {
        uint ci = g * cg + c;
        acc += LOAD_X(((n * C + ci) * IH + iy) * IW + ix) * LOAD_W(((ci * mg + mo) * KH + ky) * KW + kx);
      }
    }
  }
  y[i] = apply_act(acc, ACT, ACT_A, ACT_B);
}
