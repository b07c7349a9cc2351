#version 450
#extension GL_GOOGLE_include_directive : require
// NonMaxSuppression, step 1 of 2 (bundle feature data_dependent_outputs):
// greedy selection for one (batch, class) pair per workgroup (BATCH * CLASSES
// workgroups of 256 invocations, flattened over x and y).
//   BOXES [BATCH, N, 4] float32: [y1, x1, y2, x2] (any two opposite corners)
//     when CENTER == 0, [x_center, y_center, width, height] when CENTER == 1.
//   SCORES [BATCH, CLASSES, N] float32.
//   MAX_OUT, IOU, SCORE_T: the optional scalar inputs (int32, float32,
//     float32), read only when HAS_MAX / HAS_IOU / HAS_SCORE; a missing
//     max_output_boxes_per_class selects nothing (ONNX default 0), a missing
//     iou_threshold is 0, a missing score_threshold keeps every score.
//   SEL [BATCH * CLASSES, SLOTS] int32: the selected box indices of each pair
//     in selection order; COUNT [BATCH * CLASSES] int32: how many.
//   KEY [BATCH * CLASSES, N] uint32: scratch, each candidate's order key
//     (0 once removed).
// A candidate takes part when its score is not NaN and, with a score
// threshold, above it. Each round selects the remaining candidate of the
// highest score (ties: the lower box index), then removes every remaining
// candidate whose IoU with it exceeds the threshold; the IoU test is ONNX
// Runtime's (corners ordered per axis, no overlap or a zero area never
// suppresses), evaluated with `precise` so that the float results round as
// there. Rounds stop when nothing remains or max_output_boxes_per_class
// (capped by SLOTS) boxes are selected: O(selected * N / 256) per workgroup.
layout(local_size_x = 256) in;
#include "nms.glsl"
shared uint best_key[256];
shared uint best_idx[256];

void main() {
  const uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (g >= BATCH * CLASSES) return;  // whole workgroups
  const uint lid = gl_LocalInvocationID.x;
  const uint b = g / CLASSES;
  const uint limit = selection_limit();
  const float threshold = iou_threshold();
  const uint score_base = g * N, box_base = b * N * 4u, key_base = g * N;
  for (uint j = lid; j < N; j += 256u) {
    const float s = scores[score_base + j];
    const bool keep = limit > 0u && candidate(s);
    key[key_base + j] = keep ? order_key(s) : 0u;
  }
  uint selected = 0u;
  bool finished = limit == 0u;  // the rounds ended by the algorithm, not by a driver
  uint prev = 0xFFFFFFFFu;
  vec4 prev_box = vec4(0.0);
  while (selected < limit) {
    uint bk = 0u, bi = 0xFFFFFFFFu;
    // Each invocation owns the candidates j = lid (mod 256): removal of the
    // previous selection and the search for the next one in one pass.
    for (uint j = lid; j < N; j += 256u) {
      const uint k = key[key_base + j];
      if (k == 0u) continue;
      if (j == prev || (prev != 0xFFFFFFFFu && suppresses(prev_box, corners(box_base + 4u * j), threshold))) {
        key[key_base + j] = 0u;
        continue;
      }
      if (k > bk) {  // ascending j: the first of equal keys wins
        bk = k;
        bi = j;
      }
    }
    best_key[lid] = bk;
    best_idx[lid] = bi;
    barrier();
    for (uint stride = 128u; stride > 0u; stride >>= 1u) {
      if (lid < stride) {
        const uint ok = best_key[lid + stride], oi = best_idx[lid + stride];
        if (ok > best_key[lid] || (ok == best_key[lid] && oi < best_idx[lid])) {
          best_key[lid] = ok;
          best_idx[lid] = oi;
        }
      }
      barrier();
    }
    const uint top = best_key[0], top_idx = best_idx[0];
    barrier();  // everyone has read the result before the next round writes
    if (top == 0u) {
      finished = true;
      break;
    }
    if (lid == 0u) sel[g * SLOTS + selected] = int(top_idx);
    ++selected;
    finished = selected >= limit;
    prev = top_idx;
    prev_box = corners(box_base + 4u * top_idx);
  }
  // A driver that ends loops early (lavapipe: 65535 iterations per
  // invocation in total) would leave the rounds unfinished: report -1, which
  // the runtime turns into an error instead of returning too few boxes.
  if (lid == 0u) count[g] = finished ? int(selected) : -1;
}
