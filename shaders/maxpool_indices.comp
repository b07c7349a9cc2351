#version 450
#extension GL_GOOGLE_include_directive : require
// MaxPool with the Indices output over NCHW (NC planes folded): one
// invocation per output. Y = the window maximum (first one in row-major scan
// order on ties; padded cells excluded), I = its flat int32 index into X:
// (p * H + h) * W + w, or with COL_MAJOR (storage_order 1) p * H * W + w * H + h.
// IN_FLOAT: float32 comparisons, else int32.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { uint y[]; };
layout(set = 0, binding = 2) writeonly buffer I_ { int ind[]; };
layout(constant_id = 0) const uint NC = 1;
layout(constant_id = 1) const uint H = 1;
layout(constant_id = 2) const uint W = 1;
layout(constant_id = 3) const uint OH = 1;
layout(constant_id = 4) const uint OW = 1;
layout(constant_id = 5) const uint KH = 1;
layout(constant_id = 6) const uint KW = 1;
layout(constant_id = 7) const uint SH = 1;
layout(constant_id = 8) const uint SW = 1;
layout(constant_id = 9) const uint PH = 0;
layout(constant_id = 10) const uint PW = 0;
layout(constant_id = 11) const uint DH = 1;
layout(constant_id = 12) const uint DW = 1;
layout(constant_id = 13) const uint COL_MAJOR = 0;
layout(constant_id = 14) const uint IN_FLOAT = 1;
#include "common.glsl"
bool greater(uint a, uint b) {
  if (IN_FLOAT != 0u) return uintBitsToFloat(a) > uintBitsToFloat(b);
  return int(a) > int(b);
}
void main() {
  uint i = linear_index_256();
  if (i >= NC * OH * OW) return;
  uint ow = i % OW; uint t = i / OW; uint oh = t % OH; uint p = t / OH;
  int hs = int(oh * SH) - int(PH), ws = int(ow * SW) - int(PW);
  bool found = false;
  uint best = 0u, bh = 0u, bw = 0u;
  for (uint kh = 0u; kh < KH; ++kh) {
    int ih = hs + int(kh * DH);
    if (ih < 0 || ih >= int(H)) continue;
    for (uint kw = 0u; kw < KW; ++kw) {
      int iw = ws + int(kw * DW);
      if (iw < 0 || iw >= int(W)) continue;
      uint v = x[(p * H + uint(ih)) * W + uint(iw)];
      if (!found || greater(v, best)) { best = v; bh = uint(ih); bw = uint(iw); found = true; }
    }
  }
  y[i] = best;
  ind[i] = int(COL_MAJOR != 0u ? p * H * W + bw * H + bh : (p * H + bh) * W + bw);
}
