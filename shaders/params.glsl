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
// once a static value has folded the condition.
uint param_u(uint c) {
  const uint p = params_v4[(c >> 2u) & 0x3FFu][c & 3u];
  return (c & 0xFFFF0000u) == 0x7FFF0000u ? p : c;
}
#define PARAM_U(c) param_u(c)
#endif
