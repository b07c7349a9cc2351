#version 450
// Test kernel: row_sum.comp with both sizes read through the parameter buffer
// (bundle feature parameter_buffer, docs/bundle-format.md "Parameter buffer"):
// a specialization value v with (v & 0xFFFF0000) == 0x7FFF0000 names slot
// v & 0xFFF of the uniform buffer at set 1, binding 0 (uvec4[1024]).
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint ROWS_SC = 1u;
layout(constant_id = 1) const uint L_SC = 1u;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
layout(set = 1, binding = 0) uniform Params { uvec4 p[1024]; };
uint param(uint c) {
  const uint v = p[(c >> 2u) & 0x3FFu][c & 3u];
  return (c & 0xFFFF0000u) == 0x7FFF0000u ? v : c;
}
void main() {
  const uint rows = param(ROWS_SC), l = param(L_SC);
  uint r = gl_GlobalInvocationID.x;
  if (r >= rows) return;
  float s = 0.0;
  for (uint k = 0u; k < l; ++k) s += x[r * l + k];
  y[r] = s;
}
