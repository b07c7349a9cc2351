// Elementwise float math functions as activation codes (issue 5), included by
// common.glsl. Codes must match src/toolchain/ir/graph.h Activation.
#define ACT_FLOAT_MATH_FIRST 14u
#define ACT_LOG 14u
#define ACT_FLOOR 15u
#define ACT_CEIL 16u
#define ACT_ROUND 17u
#define ACT_SIGN 18u
#define ACT_SIN 19u
#define ACT_COS 20u
#define ACT_TAN 21u
#define ACT_ASIN 22u
#define ACT_ACOS 23u
#define ACT_ATAN 24u
#define ACT_SINH 25u
#define ACT_COSH 26u
#define ACT_ASINH 27u
#define ACT_ACOSH 28u
#define ACT_ATANH 29u
#define ACT_ERF 30u
#define ACT_SOFTPLUS 31u
#define ACT_SOFTSIGN 32u
#define ACT_ELU 33u
#define ACT_SELU 34u
#define ACT_CELU 35u
#define ACT_MISH 36u
#define ACT_THRESHOLDEDRELU 37u
#define ACT_SHRINK 38u

#include "exact_math.glsl"

float fm_nan() { return uintBitsToFloat(0x7fc00000u); }

// erf(x): Abramowitz & Stegun 7.1.26 rational approximation, |error| <= 1.5e-7.
float fm_erf(float x) {
  float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  float r = 1.0 - p * exp(-x * x);
  return x < 0.0 ? -r : r;
}
// log(1 + exp(x)) without overflow.
float fm_softplus(float x) { return max(x, 0.0) + log(1.0 + exp(-abs(x))); }

// ONNX's Log (IEEE log) for every input. GLSL leaves log(x) undefined for
// x <= 0 (SwiftShader's log(0) is -88.03, not -inf), and a driver may flush
// a subnormal argument to 0: the special values are decided on the bits, and
// a subnormal m * 2^-149 is taken as log(m) - 149 ln 2, m < 2^23 exact in
// float.
float fm_log(float v) {
  uint w = floatBitsToUint(v);
  if ((w & 0x7fffffffu) > 0x7f800000u) return v;                        // NaN
  if ((w & 0x7fffffffu) == 0u) return uintBitsToFloat(0xff800000u);     // log(+-0) = -inf
  if ((w & 0x80000000u) != 0u) return fm_nan();                         // x < 0
  if (w == 0x7f800000u) return v;                                       // log(+inf) = +inf
  if (w < 0x00800000u) return log(float(w)) - 103.27892990343185;       // subnormal
  return log(v);
}

float apply_float_math(float v, uint act, float a, float b) {
  // GLSL leaves log/asin/acos/acosh/atanh outside their domain undefined; ONNX gives NaN.
  if (act == ACT_LOG) return fm_log(v);
  if (act == ACT_FLOOR) return floor(v);
  if (act == ACT_CEIL) return ceil(v);
  if (act == ACT_ROUND) return roundEven(v);
  if (act == ACT_SIGN) return sign(v);
  if (act == ACT_SIN) return sin_reduced(v);
  if (act == ACT_COS) return cos_reduced(v);
  if (act == ACT_TAN) return tan_reduced(v);
  if (act == ACT_ASIN) return abs(v) > 1.0 ? fm_nan() : asin(v);
  if (act == ACT_ACOS) return abs(v) > 1.0 ? fm_nan() : acos(v);
  if (act == ACT_ATAN) return atan(v);
  if (act == ACT_SINH) return sinh(v);
  if (act == ACT_COSH) return cosh(v);
  if (act == ACT_ASINH) return asinh(v);
  if (act == ACT_ACOSH) return v < 1.0 ? fm_nan() : acosh(v);
  if (act == ACT_ATANH) return abs(v) > 1.0 ? fm_nan() : atanh(v);
  if (act == ACT_ERF) return fm_erf(v);
  if (act == ACT_SOFTPLUS) return fm_softplus(v);
  if (act == ACT_SOFTSIGN) return v / (1.0 + abs(v));
  if (act == ACT_ELU) return v >= 0.0 ? v : a * (exp(v) - 1.0);
  if (act == ACT_SELU) return v > 0.0 ? b * v : b * (a * exp(v) - a);
  if (act == ACT_CELU) return max(0.0, v) + min(0.0, a * (exp(v / a) - 1.0));
  if (act == ACT_MISH) return v * tanh(min(fm_softplus(v), 15.0));
  if (act == ACT_THRESHOLDEDRELU) return v > a ? v : 0.0;
  if (act == ACT_SHRINK) return v < -a ? v + b : (v > a ? v - b : 0.0);
  return v;
}
