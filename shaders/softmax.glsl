// Body of softmax.comp and softmax_sg.comp (included after #version).
// Softmax along one axis: X viewed as [OUTER, AXIS, INNER]; one 64-wide
// workgroup per (outer, inner) row. Single read pass with an online
// (running max, rescaled sum) per invocation, merged across the workgroup,
// then one write pass. The merge is a shared-memory tree (softmax.comp) or,
// with SUBGROUP_REDUCE (softmax_sg.comp), subgroupMax / subgroupAdd within
// each subgroup and one shared-memory step over the gl_NumSubgroups partial
// pairs (any subgroup size, also one larger than the workgroup).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint OUTER_SC = 1;
#define OUTER PARAM_U(OUTER_SC)
layout(constant_id = 1) const uint AXIS_SC = 1;
#define AXIS PARAM_U(AXIS_SC)
layout(constant_id = 2) const uint INNER_SC = 1;
#define INNER PARAM_U(INNER_SC)
layout(constant_id = 3) const uint MODE = 0;  // 0 Softmax, 1 LogSoftmax, 2 Hardmax (1 at the first maximum)
#include "common.glsl"
// Tree: one (max, sum) pair per invocation; subgroups: one per subgroup
// (gl_NumSubgroups <= 64 since every subgroup holds at least one invocation).
shared float smax[64];
shared float ssum[64];
shared uint sfirst;

// A pair (m, s) stands for sum(exp(v - m)) over a set of values whose maximum
// is m; the empty set is (-FLT_MAX, 0). Rescales s to a maximum mm >= m.
float rescaled(float s, float m, float mm) { return s == 0.0 ? 0.0 : s * fm_exp(m - mm); }

void main() {
  uint row = linear_group();
  if (row >= OUTER * INNER) return;  // uniform per workgroup
  uint o = row / INNER, in_ = row % INNER;
  uint base = o * AXIS * INNER + in_;
  uint t = gl_LocalInvocationID.x;
  float m = -3.402823466e38, s = 0.0;
  for (uint k = t; k < AXIS; k += 64u) {
    float v = x[base + k * INNER];
    if (v > m) { s = s * fm_exp(m - v) + 1.0; m = v; } else { s += fm_exp(v - m); }
  }
#ifdef SUBGROUP_REDUCE
  // Within the subgroup: the subgroup's maximum, every pair rescaled to it
  // and summed; one shared-memory entry per subgroup. Every subgroup then
  // reduces the same gl_NumSubgroups entries the same way, so every
  // invocation gets the same (gm, sum).
  float sg_max = subgroupMax(m);
  float sg_sum = subgroupAdd(rescaled(s, m, sg_max));
  if (subgroupElect()) { smax[gl_SubgroupID] = sg_max; ssum[gl_SubgroupID] = sg_sum; }
  barrier();
  // Across subgroups: lane i of every subgroup merges entries i, i + S, ...
  // (S = gl_SubgroupSize; one entry per lane when the entries fit in a
  // subgroup), then the subgroup reduces the lanes' pairs as above.
  float em = -3.402823466e38, es = 0.0;
  for (uint i = gl_SubgroupInvocationID; i < gl_NumSubgroups; i += gl_SubgroupSize) {
    float mm = max(em, smax[i]);
    es = rescaled(es, em, mm) + rescaled(ssum[i], smax[i], mm);
    em = mm;
  }
  float gm = subgroupMax(em);
  float sum = subgroupAdd(rescaled(es, em, gm));
#else
  smax[t] = m; ssum[t] = s;
  barrier();
  for (uint w = 32u; w > 0u; w >>= 1u) {
    if (t < w) {
      float m1 = smax[t], m2 = smax[t + w];
      float mm = max(m1, m2);
      float s1 = rescaled(ssum[t], m1, mm);
      float s2 = rescaled(ssum[t + w], m2, mm);
      smax[t] = mm; ssum[t] = s1 + s2;
    }
    barrier();
  }
  float gm = smax[0], sum = ssum[0];
#endif
  // As ONNX Runtime (x - max, exp, sum): a NaN in the row makes the sum NaN
  // (fm_exp keeps it: SwiftShader's exp(NaN) is +inf), and so does a +inf
  // maximum (inf - inf); a row of -inf has the sum 0, and both then give NaN
  // everywhere (0 * inf, -inf - -inf: fm_log(0) is -inf on every driver).
  if (isinf(gm)) sum = fm_nan();
  float inv = 1.0 / sum;
  if (MODE == 1u) {
    // (x - max) - log(sum), in ONNX Runtime's order: max + log(sum) would
    // round away log(sum) next to a large maximum.
    float ls = fm_log(sum);
    for (uint k = t; k < AXIS; k += 64u) y[base + k * INNER] = (x[base + k * INNER] - gm) - ls;
  } else if (MODE == 2u) {
    if (t == 0u) {
      uint first = 0u;
      while (first + 1u < AXIS && x[base + first * INNER] != gm) ++first;
      sfirst = first;
    }
    barrier();
    uint f = sfirst;
    for (uint k = t; k < AXIS; k += 64u) y[base + k * INNER] = k == f ? 1.0 : 0.0;
  } else {
    for (uint k = t; k < AXIS; k += 64u) y[base + k * INNER] = fm_exp(x[base + k * INNER] - gm) * inv;
  }
}
