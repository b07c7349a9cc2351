#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax / LogSoftmax / Hardmax along one axis, CPU-class kernel for many
// rows (bundle feature kernel_variants, docs/bundle-format.md "Kernel
// variants"): X viewed as [OUTER, AXIS, INNER], one invocation per (outer,
// inner) row — consecutive lanes take consecutive rows — with the same online
// (running max, rescaled sum) pass as softmax.glsl over the whole row, then
// one write pass; no shared memory, no barrier(). X is read through a uniform
// texel buffer (binding type 'f'). Same bindings and specialization constants
// as softmax; grid: ceil(OUTER * INNER / 64) workgroups split over x and y.
layout(local_size_x = 64) in;
#define TEXEL_READS 1
#include "input_x.glsl"
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint OUTER_SC = 1;
#define OUTER PARAM_U(OUTER_SC)
layout(constant_id = 1) const uint AXIS_SC = 1;
#define AXIS PARAM_U(AXIS_SC)
layout(constant_id = 2) const uint INNER_SC = 1;
#define INNER PARAM_U(INNER_SC)
layout(constant_id = 3) const uint MODE = 0;  // 0 Softmax, 1 LogSoftmax, 2 Hardmax (1 at the first maximum)
#include "common.glsl"
void main() {
  uint row = linear_group() * 64u + gl_LocalInvocationID.x;
  if (row >= OUTER * INNER) return;
  uint o = row / INNER, in_ = row % INNER;
  uint base = o * AXIS * INNER + in_;
  float m = -3.402823466e38, s = 0.0;
  for (uint k = 0u; k < AXIS; ++k) {
    float v = LOAD_X(base + k * INNER);
    if (v > m) { s = s * fm_exp(m - v) + 1.0; m = v; } else { s += fm_exp(v - m); }
  }
  if (isinf(m)) s = fm_nan();  // special values as in softmax.glsl
  if (MODE == 1u) {
    float ls = fm_log(s);
    for (uint k = 0u; k < AXIS; ++k) y[base + k * INNER] = (LOAD_X(base + k * INNER) - m) - ls;
  } else if (MODE == 2u) {
    // The first element equal to the maximum (the last one when none is, as
    // in softmax.glsl: all -inf or NaN).
    uint first = 0u;
    while (first + 1u < AXIS && LOAD_X(base + first * INNER) != m) ++first;
    for (uint k = 0u; k < AXIS; ++k) y[base + k * INNER] = k == first ? 1.0 : 0.0;
  } else {
    float inv = 1.0 / s;
    for (uint k = 0u; k < AXIS; ++k) y[base + k * INNER] = fm_exp(LOAD_X(base + k * INNER) - m) * inv;
  }
}
