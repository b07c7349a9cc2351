#version 450
#extension GL_EXT_shader_16bit_storage : require
// Test kernel for bundle feature device_variants (a GPU-class row that
// requires storageBuffer16BitAccess): y[i] = a[i] * float(b[i]) for i < N,
// a and y float32, b IEEE binary16 (buffer kind 4, weights_f16) converted to
// float32 at the load. Declares StorageBuffer16BitAccess, not Float16.
layout(local_size_x = 64) in;
layout(constant_id = 0) const uint N = 1u;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer Y { float y[]; };
void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= N) return;
  y[i] = a[i] * float(b[i]);
}
