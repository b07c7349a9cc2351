// The order of Unique's slices, shared by unique.comp and the sort-based
// kernels (unique_sort, unique_flags): X viewed as [OUTER, L, INNER] 32-bit
// words, slice i being X[:, i, :] (included after the X binding `x` and the
// constants OUTER, L, INNER and IN_FLOAT).
//   unique_key(w): a uint that orders as the values do. int32: the value
//     with its sign bit flipped. float32: float_order.glsl's key (-0.0 and
//     +0.0 share one; subnormals stay distinct on drivers that flush them),
//     every NaN (any sign or payload) the largest key: NaNs equal one
//     another and sort after +inf, as numpy's unique (equal_nan) groups them.
//   unique_compare(a, b): -1, 0 or 1 as slice a is below, equal to or above
//     slice b, lexicographically over the slice's elements in row-major
//     order. A total order, so that a sort and run detection agree.
//     OUTER * INNER iterations.
#ifndef OAAXVK_UNIQUE_ORDER_GLSL
#define OAAXVK_UNIQUE_ORDER_GLSL
#include "float_order.glsl"
uint unique_key(uint w) {
  if (IN_FLOAT == 0u) return w ^ 0x80000000u;
  return f_is_nan(w) ? 0xffffffffu : f_order_key(w);
}
uint unique_word(uint o, uint i, uint k) { return x[(o * L + i) * INNER + k]; }
int unique_compare(uint a, uint b) {
  for (uint o = 0u; o < OUTER; ++o)
    for (uint k = 0u; k < INNER; ++k) {
      const uint ka = unique_key(unique_word(o, a, k)), kb = unique_key(unique_word(o, b, k));
      if (ka != kb) return ka < kb ? -1 : 1;
    }
  return 0;
}
#endif
