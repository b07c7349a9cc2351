#version 450
#extension GL_GOOGLE_include_directive : require
// TopK along one axis: X viewed as [OUTER, L, INNER]. One invocation per input
// element computes its rank in the row (elements ordered by value, largest or
// smallest first, ties by the lower index; NaN orders above every number);
// elements of rank < K write Values[rank] and Indices[rank] (int32), so every
// output has exactly one writer. Values/Indices viewed as [OUTER, K, INNER].
// IN_FLOAT: float32 comparisons, else int32.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer V_ { uint vals[]; };
layout(set = 0, binding = 2) writeonly buffer I_ { int inds[]; };
layout(constant_id = 0) const uint N = 1;  // OUTER * L * INNER
layout(constant_id = 1) const uint L = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint K = 1;
layout(constant_id = 4) const uint LARGEST = 1;
layout(constant_id = 5) const uint IN_FLOAT = 1;
#include "common.glsl"
#include "float_order.glsl"
// True when word a (at index ia) comes before word b (at index ib).
bool before(uint a, uint ia, uint b, uint ib) {
  int cmp;  // -1: a < b, 0 equal, 1: a > b
  if (IN_FLOAT != 0u) {
    // Order keys, not float comparisons: subnormals keep their order where
    // a driver flushes them.
    const bool na = f_is_nan(a), nb = f_is_nan(b);
    const uint ka = f_order_key(a), kb = f_order_key(b);
    cmp = na ? (nb ? 0 : 1) : nb ? -1 : ka < kb ? -1 : ka > kb ? 1 : 0;
  } else {
    int sa = int(a), sb = int(b);
    cmp = sa < sb ? -1 : sa > sb ? 1 : 0;
  }
  if (cmp == 0) return ia < ib;
  return LARGEST != 0u ? cmp > 0 : cmp < 0;
}
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint in_ = i % INNER;
  uint e = (i / INNER) % L;
  uint o = i / (INNER * L);
  uint base = o * L * INNER + in_;
  uint v = x[i];
  uint rank = 0u;
  for (uint t = 0u; t < L && rank < K; ++t)
    if (t != e && before(x[base + t * INNER], t, v, e)) ++rank;
  if (rank >= K) return;
  uint out_ = (o * K + rank) * INNER + in_;
  vals[out_] = v;
  inds[out_] = int(e);
}
