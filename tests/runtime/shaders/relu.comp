#version 450
// Test kernel: y[i] = max(x[i], 0) for i < N (float32).
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 1u;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= N) return;
  y[i] = max(x[i], 0.0);
}
