#version 450
#extension GL_GOOGLE_include_directive : require
// ONNX DeformConv (opsets 19, 22) on 4-D X [N, C, IH, IW]: a grouped 2-D
// convolution whose taps are read at learned fractional positions.
//   W      [OC, C / GROUP, KH, KW]
//   offset [N, OFFSET_GROUP * KH * KW * 2, OH, OW]: per output pixel and tap,
//          (dh, dw) added to the tap's position oh * SH - PT + i * DH (rows)
//          and ow * SW - PL + j * DW (columns)
//   bias   [OC] (read when HAS_BIAS)
//   mask   [N, OFFSET_GROUP * KH * KW, OH, OW] (read when HAS_MASK): each
//          sampled value is multiplied by it
//   Y      [N, OC, OH, OW]
// Input channel c uses offset group c / (C / OFFSET_GROUP). A position is
// sampled bilinearly from its four neighbours, a neighbour outside the image
// reading 0 (GridSample with align_corners and zeros padding, as the ONNX
// definition and ONNX Runtime sample). One invocation per output element; it
// sums over the group's input channels and the taps in that order.
// Bindings without data (no bias, no mask) are bound to another buffer and
// never read.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer W_ { float w[]; };
layout(set = 0, binding = 2) readonly buffer O_ { float off[]; };
layout(set = 0, binding = 3) readonly buffer B_ { float bias[]; };
layout(set = 0, binding = 4) readonly buffer M_ { float mask[]; };
layout(set = 0, binding = 5) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint C = 1;
layout(constant_id = 2) const uint IH = 1;
layout(constant_id = 3) const uint IW = 1;
layout(constant_id = 4) const uint OC = 1;
layout(constant_id = 5) const uint OH = 1;
layout(constant_id = 6) const uint OW = 1;
layout(constant_id = 7) const uint KH = 1;
layout(constant_id = 8) const uint KW = 1;
layout(constant_id = 9) const uint SH = 1;
layout(constant_id = 10) const uint SW = 1;
layout(constant_id = 11) const uint DH = 1;
layout(constant_id = 12) const uint DW = 1;
layout(constant_id = 13) const uint PT = 0;
layout(constant_id = 14) const uint PL = 0;
layout(constant_id = 15) const uint GROUP = 1;
layout(constant_id = 16) const uint OFFSET_GROUP = 1;
layout(constant_id = 17) const uint HAS_BIAS = 0;
layout(constant_id = 18) const uint HAS_MASK = 0;
#include "common.glsl"

float tap(uint base, int r, int c) {
  if (r < 0 || c < 0 || r >= int(IH) || c >= int(IW)) return 0.0;
  return x[base + uint(r) * IW + uint(c)];
}

float bilinear(uint base, float h, float v) {
  // Entirely outside: all four neighbours read 0 (and floor() of a huge
  // offset could overflow int).
  if (h <= -1.0 || v <= -1.0 || h >= float(IH) || v >= float(IW)) return 0.0;
  float fh = floor(h), fw = floor(v);
  float th = h - fh, tw = v - fw;
  int r0 = int(fh), c0 = int(fw);
  float top = tap(base, r0, c0) * (1.0 - tw) + tap(base, r0, c0 + 1) * tw;
  float bot = tap(base, r0 + 1, c0) * (1.0 - tw) + tap(base, r0 + 1, c0 + 1) * tw;
  return top * (1.0 - th) + bot * th;
}

void main() {
  uint i = linear_index_256();
  if (i >= N * OC * OH * OW) return;
  uint ow = i % OW;
  uint oh = (i / OW) % OH;
  uint oc = (i / (OW * OH)) % OC;
  uint n = i / (OW * OH * OC);
  const uint CG = C / GROUP;
  const uint g = oc / (OC / GROUP);
  const uint taps = KH * KW;
  const uint plane = OH * OW;
  const uint pix = oh * OW + ow;
  float acc = HAS_BIAS != 0u ? bias[oc] : 0.0;
  for (uint icg = 0u; icg < CG; ++icg) {
    uint c = g * CG + icg;
    uint og = c / (C / OFFSET_GROUP);
    uint xbase = (n * C + c) * IH * IW;
    uint obase = (n * OFFSET_GROUP + og) * taps * 2u;
    uint mbase = (n * OFFSET_GROUP + og) * taps;
    uint wbase = (oc * CG + icg) * taps;
    for (uint k = 0u; k < taps; ++k) {
      uint ki = k / KW, kj = k % KW;
      float h = float(int(oh * SH + ki * DH) - int(PT)) + off[(obase + 2u * k) * plane + pix];
      float v = float(int(ow * SW + kj * DW) - int(PL)) + off[(obase + 2u * k + 1u) * plane + pix];
      float s = bilinear(xbase, h, v);
      if (HAS_MASK != 0u) s *= mask[(mbase + k) * plane + pix];
      acc += w[wbase + k] * s;
    }
  }
  y[i] = acc;
}
