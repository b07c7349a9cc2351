#version 450
// Buffer copy bandwidth through texel buffers only: read a uniform texel
// buffer (texelFetch), write a storage texel buffer (imageStore, rgba32f);
// dst[i] = src[i] over vec4 elements, grid-stride as copy.comp.
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) uniform samplerBuffer src;
layout(set = 0, binding = 1, rgba32f) writeonly uniform imageBuffer dst;
layout(push_constant) uniform P { uint count; } p;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) imageStore(dst, int(i), texelFetch(src, int(i)));
}
