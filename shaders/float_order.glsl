// Zero tests and ordering of float32 values by their bits. A driver may flush
// subnormals to zero in float comparisons (Vulkan allows it for fp32), which
// makes 1e-40 == 0.0 and 1e-40 < 2e-40 false; ONNX Runtime keeps subnormals.
// On the bits these decisions are exact on every driver:
//   f_is_zero(w): +0.0 or -0.0 (a subnormal is not zero; NaN is not zero).
//   f_order_key(w): a uint that orders as the floats do (-inf < ... < -0 ==
//     +0 < ... < +inf), -0.0 and +0.0 sharing one key. NaN is the caller's
//     to handle (its key sorts beyond the infinities).
#ifndef OAAXVK_FLOAT_ORDER_GLSL
#define OAAXVK_FLOAT_ORDER_GLSL
bool f_is_zero(uint w) { return (w & 0x7fffffffu) == 0u; }
bool f_is_nan(uint w) { return (w & 0x7fffffffu) > 0x7f800000u; }
uint f_order_key(uint w) {
  if (f_is_zero(w)) return 0x80000000u;
  return (w & 0x80000000u) != 0u ? ~w : (w | 0x80000000u);
}
#endif
