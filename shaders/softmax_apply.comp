#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax / LogSoftmax / Hardmax along an axis longer than the loop budget
// (src/toolchain/lower/loop_budget.h): the last dispatch, after the row
// statistics were reduced in stages. X viewed as [OUTER, AXIS, INNER], one
// invocation per element, no loop. STATS per row (o, in) = o · INNER + in:
// MODE 0 / 1 a log-sum-exp pair (m, s) with s = Σ exp(x − m) over the row
// (reduce.comp with OP 8 and OUT_PARTIALS); MODE 2 the int32 index of the
// row's first maximum (argreduce.comp).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) readonly buffer S_ { uint stats[]; };
layout(set = 0, binding = 2) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;  // elements
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint AXIS_SC = 1;
#define AXIS PARAM_U(AXIS_SC)
layout(constant_id = 2) const uint INNER_SC = 1;
#define INNER PARAM_U(INNER_SC)
layout(constant_id = 3) const uint MODE = 0;  // 0 Softmax, 1 LogSoftmax, 2 Hardmax
#include "common.glsl"
void main() {
  uint e = linear_index_256();
  if (e >= N) return;
  uint in_ = e % INNER, ok = e / INNER;
  uint k = ok % AXIS, row = (ok / AXIS) * INNER + in_;
  if (MODE == 2u) {
    y[e] = int(k) == int(stats[row]) ? 1.0 : 0.0;
    return;
  }
  float m = uintBitsToFloat(stats[2u * row]), s = uintBitsToFloat(stats[2u * row + 1u]);
  float v = x[e];
  // As softmax.glsl: exp(v − m) / s, or (v − m) − log s; NaN for the whole
  // row when it holds NaN (s is NaN) or +inf (m).
  if (isinf(m)) s = fm_nan();
  y[e] = MODE == 1u ? (v - m) - fm_log(s) : fm_exp(v - m) * (1.0 / s);
}
