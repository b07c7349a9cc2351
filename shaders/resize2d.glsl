// Body of resize2d.comp and resize2d_cpu.comp (included after #version).
// ONNX Resize on the two innermost dimensions of X viewed as [PLANES, IH, IW]
// (outer scales must be 1): nearest (with its rounding mode), linear
// (bilinear) or cubic (bicubic with coefficient A, optionally excluding
// taps outside the input). Coordinates per coordinate_transformation_mode,
// with the scale factors SH/SW (given scales, or out/in when `sizes` were
// given; 0 when the sizes are read at run time: then out/in is computed
// here). align_corners and pytorch_half_pixel divide by / test the output
// length (an integer), as ONNX Runtime does; the ONNX Python reference uses
// in x scale there, which differs when that is not an integer.
// tf_crop_and_resize uses the unrounded resized length (LEN_H/LEN_W), like
// the reference. Taps beyond the border repeat the edge (the reference's
// edge padding).
layout(local_size_x = 256) in;
#include "input_x.glsl"  // CPU twin binding types "fs"
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint PLANES_SC = 1;
#define PLANES PARAM_U(PLANES_SC)
layout(constant_id = 1) const uint IH_SC = 1;
#define IH PARAM_U(IH_SC)
layout(constant_id = 2) const uint IW_SC = 1;
#define IW PARAM_U(IW_SC)
layout(constant_id = 3) const uint OH_SC = 1;
#define OH PARAM_U(OH_SC)
layout(constant_id = 4) const uint OW_SC = 1;
#define OW PARAM_U(OW_SC)
layout(constant_id = 5) const float SH = 1.0;
layout(constant_id = 6) const float SW = 1.0;
// 0 half_pixel, 1 asymmetric, 2 align_corners, 3 pytorch_half_pixel,
// 4 tf_half_pixel_for_nearest, 5 tf_crop_and_resize, 6 half_pixel_symmetric
layout(constant_id = 7) const uint COORD = 0;
layout(constant_id = 8) const uint MODE = 0;     // 0 nearest, 1 linear, 2 cubic
// nearest: 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil
layout(constant_id = 9) const uint NEAREST = 0;
layout(constant_id = 10) const float CUBIC_A = -0.75;
layout(constant_id = 11) const uint EXCLUDE_OUTSIDE = 0;
// tf_crop_and_resize: the roi of the two resized axes (normalized) and the
// value of outputs whose source coordinate falls outside the input.
layout(constant_id = 12) const float ROI_H0 = 0.0;
layout(constant_id = 13) const float ROI_H1 = 1.0;
layout(constant_id = 14) const float ROI_W0 = 0.0;
layout(constant_id = 15) const float ROI_W1 = 1.0;
layout(constant_id = 16) const float EXTRAPOLATION = 0.0;
// The resized lengths before rounding (scale * in with scales, the sizes
// with sizes; 0: the output size, for sizes read at run time), as
// tf_crop_and_resize uses them.
layout(constant_id = 17) const float LEN_H = 1.0;
layout(constant_id = 18) const float LEN_W = 1.0;
#ifdef SCALES_BINDING
// Scales read at run time (resize2d_scales): the ONNX `scales` input at
// binding 2; entries SCALE_H_INDEX and SCALE_H_INDEX + 1 are SH / SW, and the
// unrounded lengths are in * scale.
layout(set = 0, binding = 2) readonly buffer Scales_ { float scales[]; };
layout(constant_id = 19) const uint SCALE_H_INDEX = 0;
#endif
#ifdef ROI_BINDING
// tf_crop_and_resize with the roi read at run time (resize2d_roi): the ONNX
// `roi` input at binding 2, [starts of the ROI_RANK dimensions, their ends];
// the last two dimensions' entries replace ROI_H0 .. ROI_W1.
layout(set = 0, binding = 2) readonly buffer Roi_ { float roi[]; };
layout(constant_id = 19) const uint ROI_RANK = 4;
#endif
#include "common.glsl"

// out_n: the output length; out_len: the unrounded resized length.
// Evaluated in ONNX Runtime's order with its roundings (correctly rounded
// divisions, no fused multiply-adds: `precise`), so a coordinate that lands
// exactly on .5 or on an integer picks the same nearest pixel as ORT.
float src_coord(float o, float scale, uint in_len, uint out_n, float out_len, float roi0, float roi1) {
  precise float c;
  if (COORD == 1u) c = div_rn(o, scale);
  else if (COORD == 2u) c = out_n == 1u ? 0.0 : div_rn(o * float(in_len - 1u), float(out_n - 1u));
  else if (COORD == 3u) c = out_n == 1u ? 0.0 : div_rn(o + 0.5, scale) - 0.5;
  else if (COORD == 4u) c = div_rn(o + 0.5, scale);
  else if (COORD == 5u) {
    precise const float start = roi0 * float(in_len - 1u);
    c = out_len == 1.0 ? (roi1 - roi0) * float(in_len - 1u) / 2.0 + start
                       : div_rn(o * (roi1 - roi0) * float(in_len - 1u), out_len - 1.0) + start;
  } else if (COORD == 6u) {
    // half_pixel_symmetric: half_pixel shifted so that the sampled span stays
    // centred when the output length was rounded (ONNX Runtime's order).
    precise const float adjustment = div_rn(float(out_n), scale * float(in_len));
    precise const float offset = float(in_len) / 2.0 * (1.0 - adjustment);
    c = offset + div_rn(o + 0.5, scale) - 0.5;
  } else c = div_rn(o + 0.5, scale) - 0.5;
  return c;
}

int nearest_index(float c, uint len) {
  float r;
  if (NEAREST == 0u) r = (fract(c) == 0.5) ? floor(c) : round(c);
  else if (NEAREST == 1u) r = (fract(c) == 0.5) ? ceil(c) : round(c);
  else if (NEAREST == 2u) r = floor(c);
  else r = ceil(c);
  return clamp(int(r), 0, int(len) - 1);
}

// Cubic convolution weights of the taps floor(c)-1 .. floor(c)+2.
vec4 cubic_weights(float c, uint len, out int first) {
  float f = floor(c);
  float t = c - f;
  first = int(f) - 1;
  const float A = CUBIC_A;
  float s0 = t + 1.0, s1 = t, s2 = 1.0 - t, s3 = 2.0 - t;
  vec4 w = vec4(((A * s0 - 5.0 * A) * s0 + 8.0 * A) * s0 - 4.0 * A,
                ((A + 2.0) * s1 - (A + 3.0)) * s1 * s1 + 1.0,
                ((A + 2.0) * s2 - (A + 3.0)) * s2 * s2 + 1.0,
                ((A * s3 - 5.0 * A) * s3 + 8.0 * A) * s3 - 4.0 * A);
  if (EXCLUDE_OUTSIDE != 0u) {
    for (int k = 0; k < 4; ++k)
      if (first + k < 0 || first + k >= int(len)) w[k] = 0.0;
    w /= (w.x + w.y + w.z + w.w);
  }
  return w;
}

#ifdef ANTIALIAS
#include "resize2d_antialias.glsl"
#endif

float at(uint base, int r, int c) {
  return LOAD_X(base + uint(clamp(r, 0, int(IH) - 1)) * IW + uint(clamp(c, 0, int(IW) - 1)));
}

void main() {
  uint i = linear_index_256();
  if (i >= PLANES * OH * OW) return;
  const uint t = div_p(i, OW_SC), ox = i - t * OW;
  const uint p = div_p(t, OH_SC), oy = t - p * OH;
#ifdef SCALES_BINDING
  const float sh = scales[SCALE_H_INDEX], sw = scales[SCALE_H_INDEX + 1u];
  const float len_h = float(IH) * sh, len_w = float(IW) * sw;
#else
  const float sh = SH != 0.0 ? SH : div_rn(float(OH), float(IH)), sw = SW != 0.0 ? SW : div_rn(float(OW), float(IW));
  const float len_h = LEN_H != 0.0 ? LEN_H : float(OH), len_w = LEN_W != 0.0 ? LEN_W : float(OW);
#endif
#ifdef ROI_BINDING
  float cy = src_coord(float(oy), sh, IH, OH, len_h, roi[ROI_RANK - 2u], roi[2u * ROI_RANK - 2u]);
  float cx = src_coord(float(ox), sw, IW, OW, len_w, roi[ROI_RANK - 1u], roi[2u * ROI_RANK - 1u]);
#else
  float cy = src_coord(float(oy), sh, IH, OH, len_h, ROI_H0, ROI_H1);
  float cx = src_coord(float(ox), sw, IW, OW, len_w, ROI_W0, ROI_W1);
#endif
  uint base = p * IH * IW;
  if (COORD == 5u && (cy < 0.0 || cy > float(IH - 1u) || cx < 0.0 || cx > float(IW - 1u))) {
    y[i] = EXTRAPOLATION;
    return;
  }
#ifdef ANTIALIAS
  if (MODE != 0u) {
    y[i] = resize_antialias(base, oy, ox, sh, sw, cy, cx);
    return;
  }
#endif
  if (MODE == 0u) {
    y[i] = LOAD_X(base + uint(nearest_index(cy, IH)) * IW + uint(nearest_index(cx, IW)));
    return;
  }
  if (MODE == 2u) {
    int fy, fx;
    vec4 wy = cubic_weights(cy, IH, fy);
    vec4 wx = cubic_weights(cx, IW, fx);
    float acc = 0.0;
    for (int r = 0; r < 4; ++r) {
      vec4 row = vec4(at(base, fy + r, fx), at(base, fy + r, fx + 1), at(base, fy + r, fx + 2), at(base, fy + r, fx + 3));
      acc += wy[r] * dot(wx, row);
    }
    y[i] = acc;
    return;
  }
  cy = clamp(cy, 0.0, float(IH - 1u));
  cx = clamp(cx, 0.0, float(IW - 1u));
  uint y0 = uint(floor(cy)), x0 = uint(floor(cx));
  uint y1 = min(y0 + 1u, IH - 1u), x1 = min(x0 + 1u, IW - 1u);
  float fy = cy - float(y0), fx = cx - float(x0);
  float top = mix(LOAD_X(base + y0 * IW + x0), LOAD_X(base + y0 * IW + x1), fx);
  float bot = mix(LOAD_X(base + y1 * IW + x0), LOAD_X(base + y1 * IW + x1), fx);
  y[i] = mix(top, bot, fy);
}
