// Shared by the NonMaxSuppression selection kernels (nms_select.comp, one
// workgroup of 256 per (batch, class) pair; nms_select_cpu.comp, one
// invocation per pair): bindings, specialization constants, the candidates'
// order key and ONNX Runtime's IoU test. Include after the local size.
layout(set = 0, binding = 0) readonly buffer B_ { float boxes[]; };
layout(set = 0, binding = 1) readonly buffer S_ { float scores[]; };
layout(set = 0, binding = 2) readonly buffer M_ { int max_out[]; };
layout(set = 0, binding = 3) readonly buffer I_ { float iou_t[]; };
layout(set = 0, binding = 4) readonly buffer T_ { float score_t[]; };
layout(set = 0, binding = 5) buffer SEL_ { int sel[]; };  // read back by the CPU variant
layout(set = 0, binding = 6) writeonly buffer C_ { int count[]; };
layout(set = 0, binding = 7) buffer K_ { uint key[]; };
layout(constant_id = 0) const uint BATCH = 1;
layout(constant_id = 1) const uint CLASSES = 1;
layout(constant_id = 2) const uint N = 1;
layout(constant_id = 3) const uint SLOTS = 1;
layout(constant_id = 4) const uint CENTER = 0;
layout(constant_id = 5) const uint HAS_MAX = 0;
layout(constant_id = 6) const uint HAS_IOU = 0;
layout(constant_id = 7) const uint HAS_SCORE = 0;

// Whether a candidate takes part: a score that is not NaN and, with a score
// threshold, above it.
bool candidate(float s) { return !isnan(s) && (HAS_SCORE == 0u || s > score_t[0]); }
// The pair's selection limit: max_output_boxes_per_class capped by SLOTS (0
// without that input).
uint selection_limit() { return HAS_MAX != 0u ? uint(clamp(max_out[0], 0, int(SLOTS))) : 0u; }
float iou_threshold() { return HAS_IOU != 0u ? iou_t[0] : 0.0; }

#include "exact_math.glsl"

// Float order as unsigned order, shifted so that no score maps to 0 (the
// "removed" key): -inf -> 0x007FFFFF + 1, +inf -> 0xFF800000 + 1.
uint order_key(float s) {
  const uint b = floatBitsToUint(s);
  return ((b & 0x80000000u) != 0u ? ~b : b | 0x80000000u) + 1u;
}

// [min x, min y, max x, max y] of a box.
vec4 corners(uint base) {
  const vec4 v = vec4(boxes[base], boxes[base + 1u], boxes[base + 2u], boxes[base + 3u]);
  if (CENTER == 0u) return vec4(min(v.y, v.w), min(v.x, v.z), max(v.y, v.w), max(v.x, v.z));
  precise const float hw = v.z / 2.0, hh = v.w / 2.0;
  precise const float x0 = v.x - hw, x1 = v.x + hw, y0 = v.y - hh, y1 = v.y + hh;
  return vec4(x0, y0, x1, y1);
}

bool suppresses(vec4 a, vec4 b, float threshold) {
  const float ix0 = max(a.x, b.x), ix1 = min(a.z, b.z);
  if (ix1 <= ix0) return false;
  const float iy0 = max(a.y, b.y), iy1 = min(a.w, b.w);
  if (iy1 <= iy0) return false;
  precise const float inter = (ix1 - ix0) * (iy1 - iy0);
  if (inter <= 0.0) return false;
  precise const float area_a = (a.z - a.x) * (a.w - a.y);
  precise const float area_b = (b.z - b.x) * (b.w - b.y);
  precise const float uni = area_a + area_b - inter;
  if (area_a <= 0.0 || area_b <= 0.0 || uni <= 0.0) return false;
  // Correctly rounded, as ORT's division: an IoU exactly at the threshold
  // (not above it) keeps the box on every driver.
  const float iou = div_rn(inter, uni);
  return iou > threshold;
}

