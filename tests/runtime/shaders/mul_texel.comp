#version 450
// Test kernel with texel-buffer bindings (bundle feature texel_bindings,
// binding types "vfs"): y[i] = a[i] * b[i] for i < N (float32), a read
// through an R32G32B32A32_SFLOAT view (4 elements per texel), b through an
// R32_SFLOAT view, y a storage buffer.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 1u;
layout(set = 0, binding = 0) uniform samplerBuffer a;
layout(set = 0, binding = 1) uniform samplerBuffer b;
layout(set = 0, binding = 2) writeonly buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= N) return;
  y[i] = texelFetch(a, int(i / 4u))[i % 4u] * texelFetch(b, int(i)).x;
}
