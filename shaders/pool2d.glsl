// Body of pool2d.comp and pool2d_cpu.comp (included after #version).
// MaxPool / AveragePool over NCHW (NC planes folded): one invocation per output.
// Window rows [oh*SH - PH, +KH) clipped to the input; for average pooling with
// COUNT_PAD the divisor counts the window's taps on padded cells up to H + PHE (W + PWE), as ONNX does.
layout(local_size_x = 256) in;
#include "input_x.glsl"  // CPU twin binding types "fs"
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint NC_SC = 1;
#define NC PARAM_U(NC_SC)
layout(constant_id = 1) const uint H_SC = 1;
#define H PARAM_U(H_SC)
layout(constant_id = 2) const uint W_SC = 1;
#define W PARAM_U(W_SC)
layout(constant_id = 3) const uint OH_SC = 1;
#define OH PARAM_U(OH_SC)
layout(constant_id = 4) const uint OW_SC = 1;
#define OW PARAM_U(OW_SC)
layout(constant_id = 5) const uint KH = 1;
layout(constant_id = 6) const uint KW = 1;
layout(constant_id = 7) const uint SH = 1;
layout(constant_id = 8) const uint SW = 1;
layout(constant_id = 9) const uint PH = 0;
layout(constant_id = 10) const uint PW = 0;
layout(constant_id = 11) const uint PHE = 0;
layout(constant_id = 12) const uint PWE = 0;
layout(constant_id = 13) const uint DH = 1;
layout(constant_id = 14) const uint DW = 1;
layout(constant_id = 15) const uint MODE = 0;       // 0 max, 1 average
layout(constant_id = 16) const uint COUNT_PAD = 0;  // AveragePool count_include_pad
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= NC * OH * OW) return;
  uint t = div_p(i, OW_SC); uint ow = i - t * OW; uint p = div_p(t, OH_SC); uint oh = t - p * OH;
  int hs = int(oh * SH) - int(PH), ws = int(ow * SW) - int(PW);
  float mx = -3.402823466e38, sum = 0.0;
  uint cnt = 0u;
  for (uint kh = 0u; kh < KH; ++kh) {
    int ih = hs + int(kh * DH);
    if (ih < 0 || ih >= int(H)) continue;
    for (uint kw = 0u; kw < KW; ++kw) {
      int iw = ws + int(kw * DW);
      if (iw < 0 || iw >= int(W)) continue;
      float v = LOAD_X((p * H + uint(ih)) * W + uint(iw));
      mx = max(mx, v); sum += v; cnt += 1u;
    }
  }
  if (MODE == 0u) { y[i] = mx; return; }
  if (COUNT_PAD != 0u) {
    // The taps of the (dilated) window before the end of the end padding: a
    // ceil_mode window may reach past it.
    int hn = min(int(KH), (int(H + PHE) - hs + int(DH) - 1) / int(DH));
    int wn = min(int(KW), (int(W + PWE) - ws + int(DW) - 1) / int(DW));
    cnt = uint(max(hn, 1) * max(wn, 1));
  }
  y[i] = cnt > 0u ? sum / float(cnt) : 0.0;
}
