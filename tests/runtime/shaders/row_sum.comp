#version 450
// Test kernel: y[r] = sum of x[r * L + k] over k < L for r < ROWS (float32),
// one invocation per row, summed in index order.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint ROWS = 1u;
layout(constant_id = 1) const uint L = 1u;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
void main() {
  uint r = gl_GlobalInvocationID.x;
  if (r >= ROWS) return;
  float s = 0.0;
  for (uint k = 0u; k < L; ++k) s += x[r * L + k];
  y[r] = s;
}
