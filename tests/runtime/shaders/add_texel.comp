#version 450
// Test kernel with texel-buffer bindings in the opposite order to mul_texel
// (binding types "fvs"): y[i] = a[i] + b[i] for i < N (float32), a read
// through an R32_SFLOAT view, b through an R32G32B32A32_SFLOAT view (4
// elements per texel), y a storage buffer. With mul_texel on the same binding
// rows, each row is viewed in two formats.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 1u;
layout(set = 0, binding = 0) uniform samplerBuffer a;
layout(set = 0, binding = 1) uniform samplerBuffer b;
layout(set = 0, binding = 2) writeonly buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= N) return;
  y[i] = texelFetch(a, int(i)).x + texelFetch(b, int(i / 4u))[i % 4u];
}
