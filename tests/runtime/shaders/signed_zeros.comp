#version 450
// Test kernel: for x[i], i < N, five float32 results whose IEEE value keeps
// the sign of a zero, an infinity or a NaN, which a compiler may change
// where the module does not declare SignedZeroInfNanPreserve:
//   y[5i]     = x < 0 ? -1 : 0   (folded to -float(x < 0): -0 for false)
//   y[5i + 1] = x + 0            (folded to x: -0 for x = -0)
//   y[5i + 2] = x * 0            (folded to 0: +0 for x < 0, 0 for inf / NaN)
//   y[5i + 3] = 0 - x            (folded to -x: -0 for x = +0)
//   y[5i + 4] = x - x            (folded to 0: 0 for inf / NaN)
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 1u;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= N) return;
  float v = x[i];
  y[5u * i] = v < 0.0 ? -1.0 : 0.0;
  y[5u * i + 1u] = v + 0.0;
  y[5u * i + 2u] = v * 0.0;
  y[5u * i + 3u] = 0.0 - v;
  y[5u * i + 4u] = v - v;
}
