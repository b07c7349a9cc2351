// The frame's parameter buffer (bundle feature parameter_buffer,
// docs/bundle-format.md "Parameter buffer"): set 1, binding 0, a uniform
// buffer of 1024 uvec4 (4096 32-bit slots, 16 KiB) that the runtime fills per
// frame from the shape program. A size-type specialization constant declared
// as NAME_SC and used through PARAM_U(NAME_SC) holds either its value or, for
// a size that depends on the input shape, the marker 0x7FFF0000 | slot; the
// kernel then reads the value from the buffer. For a static value the
// comparison folds away when the pipeline is specialized, so static bundles
// keep constant sizes. Slots are masked to the buffer (never out of range).
#ifndef OAAXVK_PARAMS_GLSL
#define OAAXVK_PARAMS_GLSL
layout(set = 1, binding = 0) uniform Params_ { uvec4 params_v4[1024]; };
// Branch-free (an OpSelect, not control flow per use): the load is dead code
// once a static value has folded the condition. PARAM_U is a macro, not a
// call of param_u: a kernel uses it hundreds of times after macro expansion,
// and a driver that inlines every call before folding the constants (Mesa's
// lavapipe) spends most of vkCreateComputePipelines on those copies.
uint param_u(uint c) {
  const uint p = params_v4[(c >> 2u) & 0x3FFu][c & 3u];
  return (c & 0xFFFF0000u) == 0x7FFF0000u ? p : c;
}
#define PARAM_U(c) mix((c), params_v4[((c) >> 2u) & 0x3FFu][(c) & 3u], ((c) & 0xFFFF0000u) == 0x7FFF0000u)
bool param_is_slot(uint c) { return (c & 0xFFFF0000u) == 0x7FFF0000u; }

// n / d for n < 2^31 and d >= 1 through the float reciprocal with two integer
// corrections (exact; checked against integer division for divisors up to
// 2^31 with the reciprocal off by +-3 ulp). Used where the divisor is only
// known at run time: it vectorizes on CPU drivers, where an integer division
// by a run-time value is a scalar loop per lane.
uint div_rt(uint n, uint d) {
  const float inv = 1.0 / float(d);
  uint q = uint(float(n) * inv);
  q = uint(int(q) + int(floor(float(int(n - q * d)) * inv)));
  const int r = int(n - q * d);
  return r < 0 ? q - 1u : (r >= int(d) ? q + 1u : q);
}
// n / PARAM_U(c) for a parameter constant c: div_rt for a parameter-buffer
// slot, the compiler's division by the constant otherwise (the unused side
// folds away at specialization; both are plain values, so no branch).
uint div_p(uint n, uint c) {
  const uint a = div_rt(n, param_u(c));
  const uint b = n / max(c, 1u);
  return param_is_slot(c) ? a : b;
}
#endif
