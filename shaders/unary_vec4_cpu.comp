#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class variant of unary.comp (bundle features kernel_variants and
// texel_bindings, docs/bundle-format.md): Y[i] = act(X[i]) four elements per
// invocation — X through an RGBA32 texel view (one texelFetch for four
// elements), Y stored as a vec4 (binding types "vs"). Same bindings and
// specialization constants as unary. Texels past N hold unspecified values
// and are never stored. Grid: 256-wide workgroups over ceil(N / 4)
// invocations (linear_index_256).
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) uniform samplerBuffer x_t;
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
layout(set = 0, binding = 1) writeonly buffer Y4_ { vec4 y4[]; };
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint ACT = 0;
layout(constant_id = 2) const float ACT_A = 0.0;
layout(constant_id = 3) const float ACT_B = 0.0;
#include "common.glsl"
void main() {
  const uint i = linear_index_256();
  if (i * 4u >= N) return;
  vec4 r = texelFetch(x_t, int(i));
  // One call site of apply_act: the driver may inline each call before it
  // folds ACT, and the unused activations are large (float_math.glsl).
  for (uint j = 0u; j < 4u; ++j) r[j] = apply_act(r[j], ACT, ACT_A, ACT_B);
  if (i * 4u + 4u <= N) {
    y4[i] = r;
  } else {
    for (uint j = 0u; i * 4u + j < N; ++j) y[i * 4u + j] = r[j];
  }
}
