#version 450
#extension GL_GOOGLE_include_directive : require
// NonMaxSuppression, step 1 of 2, CPU-class variant of nms_select.comp (same
// bindings and specialization constants; bundle feature kernel_variants):
// one invocation per (batch, class) pair (BATCH * CLASSES workgroups of 1,
// flattened over x and y), with no barriers. ONNX Runtime's algorithm: the
// candidates (score not NaN and, with a score threshold, above it) go into a
// binary max-heap in KEY ordered by score (ties: the lower box index); each
// pop is kept unless its IoU with a box already selected for the pair
// exceeds the threshold, until max_output_boxes_per_class (capped by SLOTS)
// boxes are selected or the heap is empty: O(N + popped * (log N +
// selected)) per pair.
layout(local_size_x = 1) in;
#include "nms.glsl"

uint score_base;

// Whether candidate a comes before candidate b.
bool before(uint a, uint b) {
  const float sa = scores[score_base + a], sb = scores[score_base + b];
  return sa > sb || (sa == sb && a < b);
}

void sift_down(uint base, uint i, uint n) {
  const uint v = key[base + i];
  for (;;) {
    uint c = 2u * i + 1u;
    if (c >= n) break;
    if (c + 1u < n && before(key[base + c + 1u], key[base + c])) ++c;
    if (!before(key[base + c], v)) break;
    key[base + i] = key[base + c];
    i = c;
  }
  key[base + i] = v;
}

void main() {
  const uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (g >= BATCH * CLASSES) return;
  const uint b = g / CLASSES;
  const uint limit = selection_limit();
  const float threshold = iou_threshold();
  score_base = g * N;
  const uint base = g * N, box_base = b * N * 4u;
  uint n = 0u;
  bool filled_all = N == 0u;  // no boxes (an extent read back as 0): nothing to fill
  if (limit > 0u)
    for (uint j = 0u; j < N; ++j) {
      if (candidate(scores[score_base + j])) key[base + n++] = j;
      if (j + 1u == N) filled_all = true;
    }
  for (uint i = n / 2u; i > 0u; --i) sift_down(base, i - 1u, n);
  uint selected = 0u;
  bool finished = false;  // the loop ended by its condition, not by a driver
  while (true) {
    if (n == 0u || selected >= limit) {
      finished = true;
      break;
    }
    const uint top = key[base];
    key[base] = key[base + --n];
    sift_down(base, 0u, n);
    const vec4 box = corners(box_base + 4u * top);
    bool keep = true;
    for (uint s = 0u; s < selected && keep; ++s)
      keep = !suppresses(corners(box_base + 4u * uint(sel[g * SLOTS + s])), box, threshold);
    if (keep) sel[g * SLOTS + selected++] = int(top);
  }
  // -1: a driver ended a loop early (lavapipe: 65535 loop iterations per
  // invocation in total); the runtime reports an error. The fill loop ran to
  // N when the last box was considered.
  count[g] = finished && (limit == 0u || filled_all) ? int(selected) : -1;
}
