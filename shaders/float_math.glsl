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
#include "float_order.glsl"
#include "param_arith.glsl"

// GLSL.std.450 leaves most built-ins undefined or imprecise at the edges of
// their domains (NaN, infinities, zeros, subnormals, arguments that overflow
// an intermediate exp), and the software drivers differ there: SwiftShader's
// exp(NaN) is +inf and its log(0) -88.03, lavapipe's atan(NaN) is 0, both
// flush subnormals in places. The fm_* helpers give C's libm answer (what
// ONNX Runtime computes) for every input: special values are decided on the
// bits, and the built-ins are called only where they are defined and precise
// (docs/kernels.md, "Special values").

float fm_nan() { return uintBitsToFloat(0x7fc00000u); }
float fm_inf() { return uintBitsToFloat(0x7f800000u); }
bool fm_is_nan(float v) { return f_is_nan(floatBitsToUint(v)); }
// A nonzero value with a zero exponent field (which a driver may take as 0).
bool fm_is_subnormal(float v) {
  uint w = floatBitsToUint(v) & 0x7fffffffu;
  return w != 0u && w < 0x00800000u;
}
bool fm_is_neg(float v) { return (floatBitsToUint(v) & 0x80000000u) != 0u; }

// exp(x) with exp(NaN) = NaN.
float fm_exp(float v) { return fm_is_nan(v) ? v : exp(v); }

// The sign of exp(v) - 1 as C's libm rounds it: -1, +0 or 1, NaN for NaN.
// For |v| below 2^-25 exp(v) rounds to 1, where a driver's exp may give
// 1 - 2^-24; a zero parameter multiplying exp(v) - 1 keeps only this sign.
float fm_expm1_sign(float v) {
  const float s = v < -2.98023223876953125e-8 ? -1.0 : (v >= 5.9604644775390625e-8 ? 1.0 : 0.0);
  return mix(s, v, (floatBitsToUint(v) & 0x7fffffffu) > 0x7f800000u);  // NaN on the bits
}

// erf(x): Abramowitz & Stegun 7.1.26 rational approximation, |error| <= 1.5e-7.
float fm_erf(float x) {
  if (fm_is_nan(x)) return x;
  if (abs(x) < 2.44140625e-4) return 1.1283791670955126 * x;  // 2x / sqrt(pi), -0 kept
  float t = 1.0 / (1.0 + 0.3275911 * abs(x));
  float p = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  float r = 1.0 - p * exp(-x * x);
  return x < 0.0 ? -r : r;
}
// log(1 + exp(x)) without overflow.
float fm_softplus(float x) {
  if (fm_is_nan(x)) return x;
  return max(x, 0.0) + log(1.0 + exp(-abs(x)));
}

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
  const bool sub = w < 0x00800000u;                                     // subnormal
  return log(sub ? float(w) : v) - (sub ? 103.27892990343185 : 0.0);
}
// log2(x) for x > 0 finite, subnormals included (as fm_log).
float fm_log2_pos(float v) {
  uint w = floatBitsToUint(v);
  return w < 0x00800000u ? log2(float(w)) - 149.0 : log2(v);
}

// sign(x): +-1, +0 for +-0 (as ONNX Runtime), NaN kept; a subnormal is
// nonzero.
float fm_sign(float v) {
  uint w = floatBitsToUint(v);
  uint r = (w & 0x80000000u) != 0u ? 0xbf800000u : 0x3f800000u;
  if ((w & 0x7fffffffu) == 0u) r = 0u;
  if (f_is_nan(w)) r = w;
  return uintBitsToFloat(r);
}
// floor / ceil of a subnormal are -1 / -0 below zero and +0 / 1 above: the
// built-in is applied to the significand as a normal number of the same
// sign in (-1, 1), which a driver does not flush. (Not a select between
// float constants: a compiler that need not keep signed zeros, as Vulkan
// allows, may turn (c ? -1.0 : 0.0) into -float(c), -0 for false.)
float fm_in_unit(float v) {
  uint w = floatBitsToUint(v);
  if (!fm_is_subnormal(v)) return v;
  return uintBitsToFloat(floatBitsToUint(float(w & 0x7fffffu) * 1.1920928955078125e-7) | (w & 0x80000000u));
}
float fm_floor(float v) { return floor(fm_in_unit(v)); }
float fm_ceil(float v) { return ceil(fm_in_unit(v)); }
// sqrt: NaN for every value below zero, subnormals included; -0 kept.
float fm_sqrt(float v) {
  uint w = floatBitsToUint(v);
  if ((w & 0x80000000u) != 0u && (w & 0x7fffffffu) != 0u) return f_is_nan(w) ? v : fm_nan();
  return sqrt(v);
}

// asin on [-0.5, 0.5]: odd minimax polynomial (error below 2e-7).
float fm_asin_core(float x) {
  float z = x * x;
  float p = (((4.2163199048e-2 * z + 2.4181311049e-2) * z + 4.5470025998e-2) * z + 7.4953002686e-2) * z +
            1.6666752422e-1;
  return x + x * z * p;
}
// asin (or acos when is_acos) with their own polynomial, one call of it: the
// drivers' built-ins are off by up to 2e-4 inside [-1, 1] (lavapipe's
// asin(0.5), SwiftShader's acos(0)). Beyond |x| = 1/2 through
// asin |x| = pi/2 - 2 asin(sqrt((1 - |x|) / 2)), exact steps.
float fm_asin_acos(float x, bool is_acos) {
  float a = abs(x);
  if (!(a <= 1.0)) return fm_nan();  // NaN or |x| > 1
  bool big = a > 0.5;
  float p = fm_asin_core(big ? sqrt((1.0 - a) * 0.5) : (is_acos ? x : a));
  if (is_acos) return big ? (x > 0.0 ? 2.0 * p : 3.14159265358979 - 2.0 * p) : 1.5707963267948966 - p;
  float r = big ? 1.5707963267948966 - 2.0 * p : p;
  return fm_is_neg(x) ? -r : r;
}
// atan x rounds to x below 2^-12 (keeping -0, which lavapipe's atan loses).
float fm_atan(float x) { return (fm_is_nan(x) || abs(x) < 2.44140625e-4) ? x : atan(x); }

// sinh / cosh: e^|x| / 2 as (e^(|x|/2) / 2) e^(|x|/2), finite up to
// |x| = 89.4 (a plain exp(x) overflows from 88.7).
float fm_sinh(float x) {
  float a = abs(x);
  if (fm_is_nan(x)) return x;
  if (a >= 89.5) return x < 0.0 ? -fm_inf() : fm_inf();
  if (a < 0.5) {  // Taylor series: the built-in's (e^x - e^-x) / 2 cancels
    float z = x * x;
    return x + x * z * (1.0 / 6.0 + z * (1.0 / 120.0 + z * (1.0 / 5040.0)));
  }
  if (a < 9.0) return sinh(x);
  float h = exp(0.5 * a);
  float r = (0.5 * h) * h;
  return x < 0.0 ? -r : r;
}
float fm_cosh(float x) {
  float a = abs(x);
  if (fm_is_nan(x)) return x;
  if (a >= 89.5) return fm_inf();
  if (a < 9.0) return cosh(x);
  float h = exp(0.5 * a);
  return (0.5 * h) * h;
}
// tanh(x) rounds to +-1 from |x| = 9.01; the clamp keeps a driver's
// exp-based tanh away from inf / inf. Below 2^-12 tanh x rounds to x (the
// built-in's is off by 3e-8 there, and loses -0).
float fm_tanh(float x) {
  if (fm_is_nan(x) || abs(x) < 2.44140625e-4) return x;
  return tanh(clamp(x, -15.0, 15.0));
}
// Log (ACT_LOG), Asinh, Acosh and Atanh as k log(t) + c, one call of fm_log
// for the four (every call site of a helper is a copy in the compiled
// kernel). asinh / acosh: log(2|x|) beyond 2^12 (x^2 + 1 would overflow from
// 1.8e19), asinh odd by construction (log(|x| + sqrt(x^2 + 1)) cancels for
// x < 0); atanh(x) = log((1 + x) / (1 - x)) / 2, +-inf at +-1 through
// fm_log. Below 2^-12 asinh x and atanh x round to x.
float fm_log_family(float x, uint act) {
  float a = abs(x), t = x, k = 1.0, c = 0.0;
  bool neg = false;
  if (act == ACT_ASINH || act == ACT_ACOSH) {
    if (act == ACT_ASINH) {
      if (fm_is_nan(x) || a < 2.44140625e-4) return x;
      neg = fm_is_neg(x);
    } else if (!(x >= 1.0)) {
      return fm_nan();  // NaN or x < 1
    }
    bool huge = a > 4096.0;
    t = huge ? a : a + sqrt(a * a + (act == ACT_ASINH ? 1.0 : -1.0));
    c = huge ? 0.6931471805599453 : 0.0;
  } else if (act == ACT_ATANH) {
    if (!(a <= 1.0)) return fm_nan();
    if (a < 2.44140625e-4) return x;
    t = (1.0 + x) / (1.0 - x);
    k = 0.5;
  }
  float r = k * fm_log(t) + c;
  return neg ? -r : r;
}

float apply_float_math(float v, uint act, float a, float b) {
  if (act == ACT_LOG || act == ACT_ASINH || act == ACT_ACOSH || act == ACT_ATANH) return fm_log_family(v, act);
  if (act == ACT_FLOOR) return fm_floor(v);
  if (act == ACT_CEIL) return fm_ceil(v);
  if (act == ACT_ROUND) return roundEven(v);
  if (act == ACT_SIGN) return fm_sign(v);
  if (act == ACT_SIN || act == ACT_COS || act == ACT_TAN) return trig_reduced(v, act - ACT_SIN);
  if (act == ACT_ASIN || act == ACT_ACOS) return fm_asin_acos(v, act == ACT_ACOS);
  if (act == ACT_ATAN) return fm_atan(v);
  if (act == ACT_SINH) return fm_sinh(v);
  if (act == ACT_COSH) return fm_cosh(v);
  if (act == ACT_ERF) return fm_erf(v);
  if (act == ACT_SOFTPLUS) return fm_softplus(v);
  if (act == ACT_SOFTSIGN) return v / (1.0 + abs(v));
  if (act == ACT_ELU) {
    if (v >= 0.0) return v;
    if (!PA_IS_ZERO(a)) return a * (fm_exp(v) - 1.0);
    const float s = fm_expm1_sign(v);
    return PA_MUL(a, s);
  }
  if (act == ACT_SELU) {
    if (v > 0.0) return PA_MUL(b, v);
    // ONNX Runtime's gamma * alpha * (exp(v) - 1): with a zero parameter a
    // zero whose sign is that of each factor, or NaN.
    if (!PA_IS_ZERO(a) && !PA_IS_ZERO(b)) return b * (a * fm_exp(v) - a);
    const float s = fm_expm1_sign(v), as = PA_MUL(a, s);
    return PA_MUL(b, as);
  }
  if (act == ACT_CELU) return fm_is_nan(v) ? v : max(0.0, v) + min(0.0, a * (exp(v / a) - 1.0));
  if (act == ACT_MISH) return v * fm_tanh(min(fm_softplus(v), 15.0));
  if (act == ACT_THRESHOLDEDRELU) return v > a ? v : 0.0;
  if (act == ACT_SHRINK) {
    const float nb = -b;
    return v < -a ? PA_ADD(v, b) : (v > a ? PA_ADD(v, nb) : 0.0);
  }
  return v;
}
