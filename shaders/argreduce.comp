#version 450
#extension GL_GOOGLE_include_directive : require
// ArgMax / ArgMin along one axis: X viewed as [OUTER, K, INNER] (float32 when
// IN_FLOAT = 1, else int32), Y[o, in] = int32 index of the first (or, with
// SELECT_LAST = 1, the last) extreme element.
// An axis longer than the loop budget (src/toolchain/lower/loop_budget.h)
// runs in stages: PARTS invocations per output, invocation j taking elements
// j, j + PARTS, … and writing its best (value bits, index) pair
// (OUT_PARTIALS); the next dispatch picks among those pairs (IN_PARTIALS: X
// is [outputs, parts] pairs, viewed with K = parts, INNER = 1). Pairs compare
// by value, then by index, so the result is the sequential scan's: a NaN at
// index 0 stays the answer (nothing compares better), any other NaN is
// never taken. One loop, at most ceil(K / PARTS) iterations per invocation.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { int y[]; };
layout(constant_id = 0) const uint N = 1;  // OUTER * INNER
layout(constant_id = 1) const uint K = 1;
layout(constant_id = 2) const uint INNER = 1;
layout(constant_id = 3) const uint IS_MAX = 1;
layout(constant_id = 4) const uint SELECT_LAST = 0;
layout(constant_id = 5) const uint IN_FLOAT = 1;
layout(constant_id = 6) const uint PARTS = 1;         // invocations per output
layout(constant_id = 7) const uint IN_PARTIALS = 0;   // 1: X holds (value, index) pairs
layout(constant_id = 8) const uint OUT_PARTIALS = 0;  // 1: Y receives (value, index) pairs
#include "common.glsl"
#include "float_order.glsl"

// Whether (cv, ci) replaces the best so far (bv, bi).
bool better(uint cv, int ci, uint bv, int bi) {
  bool tie_wins = SELECT_LAST == 1u ? ci > bi : ci < bi;
  if (IN_FLOAT == 1u) {
    float c = uintBitsToFloat(cv), b = uintBitsToFloat(bv);
    // The sequential scan keeps a NaN only at index 0 (nothing compares
    // better) and skips every other; a part that starts with a NaN elsewhere
    // holds it only until any other value comes.
    if (isnan(c)) return ci == 0 || (isnan(b) && bi != 0);
    if (isnan(b)) return bi != 0;
    // Order keys, not float comparisons: subnormals keep their order where
    // a driver flushes them.
    const uint kc = f_order_key(cv), kb = f_order_key(bv);
    if (kc == kb) return tie_wins;
    return IS_MAX == 1u ? kc > kb : kc < kb;
  }
  int c = int(cv), b = int(bv);
  if (c == b) return tie_wins;
  return IS_MAX == 1u ? c > b : c < b;
}

void main() {
  uint i = linear_index_256();
  if (i >= N * PARTS) return;
  uint out_ = i / PARTS, part = i % PARTS;
  uint in_ = out_ % INNER, o = out_ / INNER;
  uint base = o * K * INNER + in_;
  uint best = 0u;
  int bi = -1;
  for (uint k = part; k < K; k += PARTS) {
    uint p = base + k * INNER;
    uint v = IN_PARTIALS == 1u ? x[2u * p] : x[p];
    int vi = IN_PARTIALS == 1u ? int(x[2u * p + 1u]) : int(k);
    if (bi < 0 || better(v, vi, best, bi)) { best = v; bi = vi; }
  }
  if (OUT_PARTIALS == 1u) {
    y[2u * i] = int(best);
    y[2u * i + 1u] = bi;
  } else {
    y[i] = bi;
  }
}
