// Body of eltwise.comp and eltwise_cpu.comp (included after #version).
// Elementwise binary op with numpy broadcasting (rank <= 6) + fused activation.
// C[i] = act(op(A[a_index(i)], B[b_index(i)])); strides are in elements, 0 on
// broadcast dimensions. Dims are right-aligned in 6 slots (unused = 1).
layout(local_size_x = 256) in;
#ifdef TEXEL_READS
layout(set = 0, binding = 0) uniform samplerBuffer a_t;  // binding types "ffs"
layout(set = 0, binding = 1) uniform samplerBuffer b_t;
#define LOAD_A(i) texelFetch(a_t, int(i)).x
#define LOAD_B(i) texelFetch(b_t, int(i)).x
#else
layout(set = 0, binding = 0) readonly buffer A_ { float a[]; };
layout(set = 0, binding = 1) readonly buffer B_ { float b[]; };
#define LOAD_A(i) a[i]
#define LOAD_B(i) b[i]
#endif
layout(set = 0, binding = 2) writeonly buffer C_ { float c[]; };
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;     // output numel
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint OP = 0;    // 0 add, 1 sub, 2 mul, 3 div, 4 pow, 5 max, 6 min
layout(constant_id = 2) const uint ACT = 0;
layout(constant_id = 3) const float ACT_A = 0.0;
layout(constant_id = 4) const float ACT_B = 0.0;
layout(constant_id = 5) const uint D0_SC = 1;
#define D0 PARAM_U(D0_SC)
layout(constant_id = 6) const uint D1_SC = 1;
#define D1 PARAM_U(D1_SC)
layout(constant_id = 7) const uint D2_SC = 1;
#define D2 PARAM_U(D2_SC)
layout(constant_id = 8) const uint D3_SC = 1;
#define D3 PARAM_U(D3_SC)
layout(constant_id = 9) const uint D4_SC = 1;
#define D4 PARAM_U(D4_SC)
layout(constant_id = 10) const uint D5_SC = 1;
#define D5 PARAM_U(D5_SC)
layout(constant_id = 11) const uint SA0_SC = 0;
#define SA0 PARAM_U(SA0_SC)
layout(constant_id = 12) const uint SA1_SC = 0;
#define SA1 PARAM_U(SA1_SC)
layout(constant_id = 13) const uint SA2_SC = 0;
#define SA2 PARAM_U(SA2_SC)
layout(constant_id = 14) const uint SA3_SC = 0;
#define SA3 PARAM_U(SA3_SC)
layout(constant_id = 15) const uint SA4_SC = 0;
#define SA4 PARAM_U(SA4_SC)
layout(constant_id = 16) const uint SA5_SC = 0;
#define SA5 PARAM_U(SA5_SC)
layout(constant_id = 17) const uint SB0_SC = 0;
#define SB0 PARAM_U(SB0_SC)
layout(constant_id = 18) const uint SB1_SC = 0;
#define SB1 PARAM_U(SB1_SC)
layout(constant_id = 19) const uint SB2_SC = 0;
#define SB2 PARAM_U(SB2_SC)
layout(constant_id = 20) const uint SB3_SC = 0;
#define SB3 PARAM_U(SB3_SC)
layout(constant_id = 21) const uint SB4_SC = 0;
#define SB4 PARAM_U(SB4_SC)
layout(constant_id = 22) const uint SB5_SC = 0;
#define SB5 PARAM_U(SB5_SC)
#include "common.glsl"
// ONNX's Pow is C's pow (C99 Annex F) for every input: pow(x, +-0) = 1 and
// pow(1, y) = 1 even for NaN; pow(+-0, y) and pow(+-inf, y) keep the sign of
// the base for odd integral y; pow(-1, +-inf) = 1; a negative base with a
// non-integral exponent is NaN. GLSL's pow / exp2 / log2 are undefined or
// differ between drivers at all of these (SwiftShader's exp2(NaN) is +inf),
// so the special cases are decided first and exp2(y log2 |x|) is used only
// for finite nonzero bases. Squares and square roots are exact.
float onnx_pow(float x, float y) {
  if (f_is_zero(floatBitsToUint(y)) || x == 1.0) return 1.0;
  if (fm_is_nan(x) || fm_is_nan(y)) return fm_nan();
  if (y == 1.0) return x;
  if (y == 2.0) return x * x;
  const float ax = abs(x);
  if (isinf(y)) return ax == 1.0 ? 1.0 : ((ax > 1.0) == (y > 0.0) ? fm_inf() : 0.0);
  const bool integral = floor(y) == y;
  const bool odd = integral && abs(y) < 16777216.0 && mod(y, 2.0) == 1.0;
  const bool neg = fm_is_neg(x);
  if (f_is_zero(floatBitsToUint(x)) || isinf(x)) {
    // |x|^y is 0 or inf: inf for (0, y < 0) and (inf, y > 0).
    const float m = (y < 0.0) == isinf(x) ? 0.0 : fm_inf();
    return neg && odd ? -m : m;
  }
  if (neg && !integral) return fm_nan();
  const float m = y == 0.5 ? sqrt(ax) : exp2(y * fm_log2_pos(ax));
  return neg && odd ? -m : m;
}
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint r = i;
  uint q5 = div_p(r, D5_SC), i5 = r - q5 * D5; r = q5;
  uint q4 = div_p(r, D4_SC), i4 = r - q4 * D4; r = q4;
  uint q3 = div_p(r, D3_SC), i3 = r - q3 * D3; r = q3;
  uint q2 = div_p(r, D2_SC), i2 = r - q2 * D2; r = q2;
  uint q1 = div_p(r, D1_SC), i1 = r - q1 * D1; r = q1;
  uint i0 = r;
  uint ia = i0 * SA0 + i1 * SA1 + i2 * SA2 + i3 * SA3 + i4 * SA4 + i5 * SA5;
  uint ib = i0 * SB0 + i1 * SB1 + i2 * SB2 + i3 * SB3 + i4 * SB4 + i5 * SB5;
  float x = LOAD_A(ia), y = LOAD_B(ib), v;
  if (OP == 0u) v = x + y;
  else if (OP == 1u) v = x - y;
  else if (OP == 2u) v = x * y;
  else if (OP == 3u) v = div_rn(x, y);  // correctly rounded: Floor/Ceil of an exact quotient
  else if (OP == 4u) v = onnx_pow(x, y);
  else if (OP == 5u) v = (isnan(x) || isnan(y)) ? x + y : max(x, y);
  else v = (isnan(x) || isnan(y)) ? x + y : min(x, y);
  c[i] = apply_act(v, ACT, ACT_A, ACT_B);
}
