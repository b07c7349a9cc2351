#version 450
#extension GL_GOOGLE_include_directive : require
// Reduce* over any set of axes (rank <= 6). The kept dimensions (output
// order) and the reduced dimensions are each right-aligned in 6 slots
// (unused: dim 1, stride 0); strides are input element strides.
// OP: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 L1, 6 L2, 7 log-sum,
//     8 log-sum-exp, 9 sum of squares.
// A reduction longer than the loop budget (src/toolchain/lower/loop_budget.h)
// runs in stages: PARTS invocations per output, invocation j reducing
// elements j, j + PARTS, … into one partial result (OUT_PARTIALS), and the
// next dispatch reduces those partials (IN_PARTIALS: X is [outputs, parts]
// partials, described by the kept / reduced slots like any input). Partials
// are plain sums (of |v|, v² for L1 / L2 / sum of squares), maxima, minima or
// products; log-sum-exp keeps a pair (m, s) with s = Σ exp(v − m) over the
// elements taken, m their maximum (two floats per partial). One loop, at most
// ceil(RCOUNT / PARTS) iterations per invocation.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
layout(constant_id = 0) const uint N = 1;       // output numel
layout(constant_id = 1) const uint OP = 0;
layout(constant_id = 2) const uint RCOUNT = 1;  // reduced elements per output
layout(constant_id = 3) const uint K0 = 1;
layout(constant_id = 4) const uint K1 = 1;
layout(constant_id = 5) const uint K2 = 1;
layout(constant_id = 6) const uint K3 = 1;
layout(constant_id = 7) const uint K4 = 1;
layout(constant_id = 8) const uint K5 = 1;
layout(constant_id = 9) const uint KS0 = 0;
layout(constant_id = 10) const uint KS1 = 0;
layout(constant_id = 11) const uint KS2 = 0;
layout(constant_id = 12) const uint KS3 = 0;
layout(constant_id = 13) const uint KS4 = 0;
layout(constant_id = 14) const uint KS5 = 0;
layout(constant_id = 15) const uint R0 = 1;
layout(constant_id = 16) const uint R1 = 1;
layout(constant_id = 17) const uint R2 = 1;
layout(constant_id = 18) const uint R3 = 1;
layout(constant_id = 19) const uint R4 = 1;
layout(constant_id = 20) const uint R5 = 1;
layout(constant_id = 21) const uint RS0 = 0;
layout(constant_id = 22) const uint RS1 = 0;
layout(constant_id = 23) const uint RS2 = 0;
layout(constant_id = 24) const uint RS3 = 0;
layout(constant_id = 25) const uint RS4 = 0;
layout(constant_id = 26) const uint RS5 = 0;
layout(constant_id = 27) const uint PARTS = 1;         // invocations per output
layout(constant_id = 28) const uint IN_PARTIALS = 0;   // 1: X holds partial results
layout(constant_id = 29) const uint OUT_PARTIALS = 0;  // 1: Y receives partial results
layout(constant_id = 30) const uint COUNT = 1;         // elements of the whole reduction (mean)
#include "common.glsl"

uint reduced_offset(uint r) {
  uint off = 0u;
  off += (r % R5) * RS5; r /= R5;
  off += (r % R4) * RS4; r /= R4;
  off += (r % R3) * RS3; r /= R3;
  off += (r % R2) * RS2; r /= R2;
  off += (r % R1) * RS1; r /= R1;
  off += r * RS0;
  return off;
}

// Log-sum-exp pairs: (m, s) stands for s = Σ exp(v − m); the empty set is
// (−FLT_MAX, 0). Rescales s to a maximum mm >= m (exactly when m == mm, so
// that infinite maxima merge without inf − inf).
float rescaled(float s, float m, float mm) { return (s == 0.0 || m == mm) ? s : s * fm_exp(m - mm); }

void main() {
  uint i = linear_index_256();
  if (i >= N * PARTS) return;
  uint o = i / PARTS, part = i % PARTS;
  uint r = o, base = 0u;
  base += (r % K5) * KS5; r /= K5;
  base += (r % K4) * KS4; r /= K4;
  base += (r % K3) * KS3; r /= K3;
  base += (r % K2) * KS2; r /= K2;
  base += (r % K1) * KS1; r /= K1;
  base += r * KS0;
  // acc: the running result (log-sum-exp: the running maximum m, with s).
  // The empty set's value (a part with no elements, or a reduction over an
  // extent read back that is 0): 1 for a product, -inf / +inf for a maximum
  // / minimum (so an empty part never wins a merge), -0 for the sums (the
  // identity of IEEE addition: a sum of -0s is -0, as in ONNX Runtime).
  float acc = OP == 4u ? 1.0
            : OP == 8u ? -3.402823466e38
            : OP == 2u ? uintBitsToFloat(0xff800000u)
            : OP == 3u ? uintBitsToFloat(0x7f800000u)
                       : uintBitsToFloat(0x80000000u);
  float s = 0.0;
  bool first = true;
  for (uint k = part; k < RCOUNT; k += PARTS) {
    uint off = base + reduced_offset(k);
    if (OP == 8u) {
      float pm = IN_PARTIALS == 1u ? x[2u * off] : x[off];
      float ps = IN_PARTIALS == 1u ? x[2u * off + 1u] : 1.0;
      if (fm_is_nan(pm) || fm_is_nan(ps)) {
        s = fm_nan();  // sticks: GLSL's max may drop a NaN
      } else {
        float mm = max(acc, pm);
        s = rescaled(s, acc, mm) + rescaled(ps, pm, mm);
        acc = mm;
      }
    } else {
      float v = x[off];
      if (IN_PARTIALS == 0u) v = OP == 5u ? abs(v) : ((OP == 6u || OP == 9u) ? v * v : v);
      if (OP == 2u) acc = first ? v : max(acc, v);
      else if (OP == 3u) acc = first ? v : min(acc, v);
      else if (OP == 4u) acc *= v;
      else acc += v;
    }
    first = false;
  }
  if (OUT_PARTIALS == 1u) {
    if (OP == 8u) {
      y[2u * i] = acc;
      y[2u * i + 1u] = s;
    } else {
      y[i] = acc;
    }
    return;
  }
  // The last stage has PARTS = 1, so i is the output index. A sum of 0 (the
  // empty set, or zeros) has the logarithm -inf, written as such (fm_log: a
  // driver's log(0) may be a large finite negative value instead, and
  // -FLT_MAX + log(0) would round to -FLT_MAX); a NaN in the set gives NaN.
  const float neg_inf = uintBitsToFloat(0xff800000u);
  if (OP == 8u) acc = fm_is_nan(s) ? s : isinf(acc) ? acc : (s == 0.0 ? neg_inf : acc + fm_log(s));
  else if (OP == 1u) acc /= float(COUNT);
  else if (OP == 6u) acc = sqrt(acc);
  else if (OP == 7u) acc = fm_log(acc);
  // The sums start at -0 so that a sum of -0s stays -0, but the sum over the
  // empty set is +0 (ONNX's empty-set value, ONNX Runtime's and numpy's).
  if (COUNT == 0u && (OP == 0u || OP == 5u || OP == 6u || OP == 9u)) acc = 0.0;
  y[i] = acc;
}
