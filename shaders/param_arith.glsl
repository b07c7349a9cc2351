// Arithmetic with an activation parameter (included by float_math.glsl).
//
// Activation parameters (ACT_A, ACT_B) and the constants of a fused chain
// like Add(Mul(x, a), b) are specialization constants, so the driver sees
// them as literals and may fold the arithmetic: lavapipe (Mesa 22.3) turns
// `0 * v` into 0 and `v + 0` into v even under SignedZeroInfNanPreserve,
// where IEEE (and ONNX Runtime) has NaN for 0 * inf and 0 * NaN, a signed
// zero for 0 * finite, and +0 for -0 + 0. These give the IEEE result for
// every v: the degenerate constant is recognised on its bits, which the
// specialization folds, so a kernel with an ordinary constant runs exactly
// the plain `c * v` / `v + c` it always did, and only a zero constant pays
// for a decision on the bits of v (docs/kernels.md, "Special values").
//
// Macros, not functions, like PARAM_U (params.glsl), and selects through
// mix(x, y, bool) (an OpSelect, where `?:` becomes a branch): lavapipe
// inlines every call and translates every branch before the constants fold,
// and apply_act's dozen uses as calls with branches add a quarter to a
// unary kernel's pipeline creation time, as selects a tenth. The arguments
// must be variables or constants (they are read more than once).

#ifndef OAAXVK_PARAM_ARITH_GLSL
#define OAAXVK_PARAM_ARITH_GLSL

// +-0 on the bits (a subnormal constant is not zero); +-inf or NaN.
#define PA_IS_ZERO(c) ((floatBitsToUint(c) & 0x7fffffffu) == 0u)
#define PA_IS_NONFINITE(v) ((floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u)

// c * v for a constant c. c = +-0: NaN for v = +-inf or NaN, else the zero
// whose sign is sign(c) xor sign(v) (subnormal v included).
#define PA_MUL(c, v)                                                                       \
  mix((c) * (v),                                                                           \
      uintBitsToFloat(((floatBitsToUint(v) ^ floatBitsToUint(c)) & 0x80000000u) |        \
                      mix(0u, 0x7fc00000u, PA_IS_NONFINITE(v))),                          \
      PA_IS_ZERO(c))

// v + c for a constant c. c = +0: v, except that -0 + 0 is +0. (c = -0 gives
// v for every v, which a fold to v keeps.)
#define PA_ADD(v, c) \
  mix((v) + (c), uintBitsToFloat(mix(floatBitsToUint(v), 0u, floatBitsToUint(v) == 0x80000000u)), \
      floatBitsToUint(c) == 0u)

#endif
