#version 450
// Buffer copy bandwidth with the read through a uniform texel buffer
// (R32G32B32A32_SFLOAT view, texelFetch) and the write to a storage buffer:
// dst[i] = src[i] over vec4 elements, grid-stride as copy.comp.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) uniform samplerBuffer src;
layout(std430, set = 0, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform P { uint count; } p;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) dst[i] = texelFetch(src, int(i));
}
