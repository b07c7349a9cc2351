// Scatter reductions on 32-bit words (included by scatter_*.comp):
// 0 none (replace), 1 add, 2 mul, 3 max, 4 min; float32 when in_float != 0,
// else int32 (wrapping).
uint scatter_apply(uint cur, uint u, uint red, uint in_float) {
  if (red == 0u) return u;
  if (in_float != 0u) {
    float a = uintBitsToFloat(cur), b = uintBitsToFloat(u);
    float r = red == 1u ? a + b : red == 2u ? a * b : red == 3u ? max(a, b) : min(a, b);
    return floatBitsToUint(r);
  }
  int a = int(cur), b = int(u);
  int r = red == 1u ? a + b : red == 2u ? a * b : red == 3u ? max(a, b) : min(a, b);
  return uint(r);
}
