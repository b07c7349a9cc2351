#version 450
// Buffer copy bandwidth: dst[i] = src[i] over vec4 elements, grid-stride so
// any buffer size fits in a bounded group count.
layout(local_size_x_id = 0) in;
layout(std430, set = 0, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, set = 0, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform P { uint count; } p;

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) dst[i] = src[i];
}
