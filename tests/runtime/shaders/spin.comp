#version 450
// Test kernel, deliberately slow: y[i] = x[i] after ITERATIONS dependent
// multiply-adds per element whose result the compiler cannot prove unused
// (acc converges to 2 and never exceeds 1e30). Used to test bounded waits.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 1u;
layout(constant_id = 1) const uint ITERATIONS = 1u;
layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= N) return;
  float acc = x[i];
  for (uint k = 0u; k < ITERATIONS; ++k) acc = acc * 0.5 + 1.0;
  y[i] = x[i] + (acc > 1e30 ? 1.0 : 0.0);
}
