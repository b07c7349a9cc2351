#version 450
#extension GL_GOOGLE_include_directive : require
// Depthwise Conv2D (groups == C == K_OUT): one invocation per output element.
// Y = act(conv + bias + (HAS_RES ? R : 0)); R (binding 4) is a fused residual
// Add operand with Y's shape.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer W_ { float w[]; };
layout(set = 0, binding = 2) readonly buffer B_ { float bias[]; };
layout(set = 0, binding = 3) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 4) readonly buffer R_ { float res[]; };
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
void main() {
  uint i = linear_index_256();
  if (i >= N * C * OH * OW) return;
  uint ow = i % OW; uint t = i / OW; uint oh = t % OH; t /= OH; uint c = t % C; uint nb = t / C;
  float acc = HAS_BIAS != 0u ? bias[c] : 0.0;
  for (uint kh = 0u; kh < KH; ++kh) {
    int ih = int(oh * SH + kh * DH) - int(PH);
    if (ih < 0 || ih >= int(H)) continue;
    for (uint kw = 0u; kw < KW; ++kw) {
      int iw = int(ow * SW + kw * DW) - int(PW);
      if (iw < 0 || iw >= int(W)) continue;
      acc += w[(c * KH + kh) * KW + kw] * x[((nb * C + c) * H + uint(ih)) * W + uint(iw)];
    }
  }
  if (HAS_RES != 0u) acc += res[i];
  y[i] = apply_act(acc, ACT, ACT_A, ACT_B);
}
