// Arithmetic with an activation parameter (included by float_math.glsl).
//
// Activation parameters (ACT_A, ACT_B) and the constants of a fused chain
// like Add(Mul(x, a), b) are specialization constants, so the driver sees
// them as literals and may fold the arithmetic: lavapipe (Mesa 22.3) turns
// `0 * v` into 0 and `v + 0` into v even under SignedZeroInfNanPreserve,
// where IEEE (and ONNX Runtime) has NaN for 0 * inf and 0 * NaN, a signed
// zero for 0 * finite, and +0 for -0 + 0. These helpers give the IEEE result
// for every v: the degenerate constant is recognised on its bits, which the
// specialization folds, so a kernel with an ordinary constant runs exactly
// the plain `c * v` / `v + c` it always did, and only a zero constant pays
// for a decision on the bits of v (docs/kernels.md, "Special values").

#ifndef OAAXVK_PARAM_ARITH_GLSL
#define OAAXVK_PARAM_ARITH_GLSL

// c * v for a constant c. c = +-0: NaN for v = +-inf or NaN, else the zero
// whose sign is sign(c) xor sign(v) (subnormal v included).
float pa_mul(float c, float v) {
  const uint wc = floatBitsToUint(c);
  if ((wc & 0x7fffffffu) != 0u) return c * v;
  const uint wv = floatBitsToUint(v);
  return (wv & 0x7f800000u) == 0x7f800000u ? uintBitsToFloat(0x7fc00000u)
                                           : uintBitsToFloat((wv ^ wc) & 0x80000000u);
}

// v + c for a constant c. c = +0: v, except that -0 + 0 is +0. (c = -0 gives
// v for every v, which a fold to v keeps.)
float pa_add(float v, float c) {
  if (floatBitsToUint(c) != 0u) return v + c;
  return floatBitsToUint(v) == 0x80000000u ? 0.0 : v;
}

#endif
