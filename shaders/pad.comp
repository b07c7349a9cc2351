#version 450
#extension GL_GOOGLE_include_directive : require
// Pad: Y (6 dims OD, right-aligned) from X (6 dims ID): input coordinate
// c - PB on each dim (PB may be negative: cropping). Outside X: MODE 0
// constant (the word V[0] when HAS_VALUE, else VALUE_BITS), 1 reflect (no edge
// repeat; the toolchain guarantees pads < extent), 2 edge (clamped).
// 32-bit words.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) readonly buffer V_ { uint value[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint MODE = 0;
layout(constant_id = 2) const uint HAS_VALUE = 0;
layout(constant_id = 3) const uint VALUE_BITS = 0;
layout(constant_id = 4) const uint OD0 = 1;
layout(constant_id = 5) const uint OD1 = 1;
layout(constant_id = 6) const uint OD2 = 1;
layout(constant_id = 7) const uint OD3 = 1;
layout(constant_id = 8) const uint OD4 = 1;
layout(constant_id = 9) const uint OD5 = 1;
layout(constant_id = 10) const uint ID0 = 1;
layout(constant_id = 11) const uint ID1 = 1;
layout(constant_id = 12) const uint ID2 = 1;
layout(constant_id = 13) const uint ID3 = 1;
layout(constant_id = 14) const uint ID4 = 1;
layout(constant_id = 15) const uint ID5 = 1;
layout(constant_id = 16) const int PB0 = 0;
layout(constant_id = 17) const int PB1 = 0;
layout(constant_id = 18) const int PB2 = 0;
layout(constant_id = 19) const int PB3 = 0;
layout(constant_id = 20) const int PB4 = 0;
layout(constant_id = 21) const int PB5 = 0;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint od[6] = uint[6](OD0, OD1, OD2, OD3, OD4, OD5);
  uint id[6] = uint[6](ID0, ID1, ID2, ID3, ID4, ID5);
  int pb[6] = int[6](PB0, PB1, PB2, PB3, PB4, PB5);
  uint r = i, off = 0u, stride = 1u;
  for (int k = 5; k >= 0; --k) {
    int c = int(r % od[k]) - pb[k];
    r /= od[k];
    int n = int(id[k]);
    if (c < 0 || c >= n) {
      if (MODE == 0u) { y[i] = HAS_VALUE != 0u ? value[0] : VALUE_BITS; return; }
      if (MODE == 1u && n > 1) {
        // Reflection is even (c and -c read the same element) and periodic
        // in 2(n - 1): fold |c| with an unsigned remainder. GLSL leaves % of
        // a negative int undefined, and drivers differ (one NVIDIA driver
        // computes it as if the operand were unsigned).
        uint period = 2u * uint(n - 1);
        uint a = uint(abs(c)) % period;
        c = int(a >= uint(n) ? period - a : a);
      } else {
        c = clamp(c, 0, n - 1);
      }
    }
    off += uint(c) * stride;
    stride *= id[k];
  }
  y[i] = x[off];
}
