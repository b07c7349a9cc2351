// Body of unary.comp and unary_cpu.comp (included after #version).
// Standalone activation: Y[i] = act(X[i]).
layout(local_size_x = 256) in;
#include "input_x.glsl"  // CPU twin binding types "fs"
layout(set = 0, binding = 1) writeonly buffer Y_ { float y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint ACT = 0;
layout(constant_id = 2) const float ACT_A = 0.0;
layout(constant_id = 3) const float ACT_B = 0.0;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  y[i] = apply_act(LOAD_X(i), ACT, ACT_A, ACT_B);
}
