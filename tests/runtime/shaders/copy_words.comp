#version 450
// Test kernel: y[i] = x[i] for i < N, 32-bit words copied unchanged (int32 or float32).
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 1u;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { uint y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= N) return;
  y[i] = x[i];
}
