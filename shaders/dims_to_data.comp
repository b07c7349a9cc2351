#version 450
#extension GL_GOOGLE_include_directive : require
// A small integer constant whose elements are sizes computed from the input
// shapes or run-time values (dynamic shapes): writes COUNT (at most 8) values
// V0..V7, each a parameter constant (the frame's parameter buffer holds the
// ones that vary), as int32 words of Y. One invocation.
layout(local_size_x = 1) in;
layout(set = 0, binding = 0) writeonly buffer Y_ { int y[]; };
#include "params.glsl"
layout(constant_id = 0) const uint COUNT = 1;
layout(constant_id = 1) const uint V0_SC = 0;
layout(constant_id = 2) const uint V1_SC = 0;
layout(constant_id = 3) const uint V2_SC = 0;
layout(constant_id = 4) const uint V3_SC = 0;
layout(constant_id = 5) const uint V4_SC = 0;
layout(constant_id = 6) const uint V5_SC = 0;
layout(constant_id = 7) const uint V6_SC = 0;
layout(constant_id = 8) const uint V7_SC = 0;
void main() {
  const uint v[8] = uint[8](PARAM_U(V0_SC), PARAM_U(V1_SC), PARAM_U(V2_SC), PARAM_U(V3_SC), PARAM_U(V4_SC),
                            PARAM_U(V5_SC), PARAM_U(V6_SC), PARAM_U(V7_SC));
  for (uint i = 0u; i < COUNT && i < 8u; ++i) y[i] = int(v[i]);
}
