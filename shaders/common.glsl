// Shared helpers for oaax-vulkan kernels (included, not compiled alone).
// Activation codes (must match src/toolchain/ir/graph.h Activation).
#define ACT_NONE 0u
#define ACT_RELU 1u
#define ACT_CLIP 2u
#define ACT_SIGMOID 3u
#define ACT_HARDSIGMOID 4u
#define ACT_HARDSWISH 5u
#define ACT_LEAKYRELU 6u
#define ACT_SWISH 7u
#define ACT_SQRT 8u
#define ACT_NEG 9u
#define ACT_EXP 10u
#define ACT_ABS 11u
#define ACT_TANH 12u
#define ACT_RECIPROCAL 13u
#define ACT_AFFINE 39u  // a * v + b (graph.h Activation::kAffine)
// Float math functions (issue 5; codes 14..38, see graph.h), in float_math.glsl.
#include "float_math.glsl"

float apply_act(float v, uint act, float a, float b) {
  // Written as selects, not max / clamp, so that NaN propagates (GLSL's max
  // and clamp may return either operand for NaN) and Relu keeps -0. Products
  // and sums with a parameter go through PA_MUL / PA_ADD (param_arith.glsl):
  // the parameters are specialization constants, which a driver may fold.
  if (act == ACT_RELU) return v < 0.0 ? 0.0 : v;
  if (act == ACT_CLIP) return v < a ? a : (v > b ? b : v);
  if (act == ACT_SIGMOID) return 1.0 / (1.0 + fm_exp(-v));
  if (act == ACT_HARDSIGMOID) {
    const float p = PA_MUL(a, v), t = PA_ADD(p, b);
    return t < 0.0 ? 0.0 : (t > 1.0 ? 1.0 : t);
  }
  if (act == ACT_HARDSWISH) return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
  if (act == ACT_LEAKYRELU) return v >= 0.0 ? v : PA_MUL(a, v);
  if (act == ACT_SWISH) { const float na = -a; return v / (1.0 + exp(PA_MUL(na, v))); }
  if (act == ACT_SQRT) return fm_sqrt(v);
  if (act == ACT_NEG) return -v;
  if (act == ACT_EXP) return fm_exp(v);
  if (act == ACT_ABS) return abs(v);
  if (act == ACT_TANH) return fm_tanh(v);
  if (act == ACT_RECIPROCAL) return 1.0 / v;
  if (act == ACT_AFFINE) { const float p = PA_MUL(a, v); return PA_ADD(p, b); }
  if (act >= ACT_FLOAT_MATH_FIRST) return apply_float_math(v, act, a, b);
  return v;
}
// apply_act on four values through one call site. The driver compiles each
// call site of apply_act with every activation before specialization removes
// the unused ones, so four calls in a row cost four copies of all of them.
vec4 apply_act4(vec4 v, uint act, float a, float b) {
  vec4 r;
  for (int j = 0; j < 4; ++j) r[j] = apply_act(v[j], act, a, b);
  return r;
}

// Linear invocation index over a 1-D range split across groups_x x groups_y
// (groups_x <= 65535) with 256-wide workgroups.
uint linear_index_256() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * 256u + gl_LocalInvocationID.x;
}
uint linear_group() {
  return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}
