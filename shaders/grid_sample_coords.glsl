// Source coordinates of GridSample (grid_sample.comp, grid_sample3d.comp;
// included, not compiled alone): a normalized grid value in [-1, 1] mapped
// to pixel space by ALIGN_CORNERS, and the padding mode PADDING (0 zeros:
// unchanged, 1 border: clip, 2 reflection: reflect then clip) applied to it.
// The including shader declares the spec constants ALIGN_CORNERS and PADDING
// and includes common.glsl (fmod_exact, div_rn) first.

float unnormalize(float g, uint size) {
  return ALIGN_CORNERS != 0u ? (g + 1.0) * 0.5 * float(size - 1u) : ((g + 1.0) * float(size) - 1.0) * 0.5;
}

float reflect_coord(float v, float twice_low, float twice_high) {
  if (twice_low == twice_high) return 0.0;
  float lo = twice_low * 0.5;
  float span = (twice_high - twice_low) * 0.5;
  v = abs(v - lo);
  // ORT's fmod and floor of the quotient, exact on any driver (v >= 0).
  const float extra = fmod_exact(v, span);
  const float flips = floor(div_rn(v, span));
  return mod(flips, 2.0) == 0.0 ? extra + lo : span - extra + lo;
}

// The padding mode applied to a coordinate (border: clip; reflection:
// reflect then clip); zeros leaves it as is.
float pad_coord(float v, uint size) {
  if (PADDING == 1u) return clamp(v, 0.0, float(size - 1u));
  if (PADDING == 2u) {
    v = ALIGN_CORNERS != 0u ? reflect_coord(v, 0.0, 2.0 * float(size - 1u))
                            : reflect_coord(v, -1.0, 2.0 * float(size) - 1.0);
    return clamp(v, 0.0, float(size - 1u));
  }
  return v;
}
