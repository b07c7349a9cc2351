#version 450
// Sustained fp16 FMA rate (devices with shaderFloat16): as fma_f32.comp with
// f16vec4 accumulators; only the final sum is stored, as fp32, so the kernel
// needs no 16-bit storage feature.
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ACC = 4;
layout(std430, set = 0, binding = 0) writeonly buffer Out { float result[]; };
layout(push_constant) uniform P { uint iterations; float x; float y; } p;

void main() {
  const uint gid = gl_GlobalInvocationID.x;
  f16vec4 a[ACC];
  for (int k = 0; k < ACC; ++k) a[k] = f16vec4(float16_t(float(gid % 7u) + float(k)), 1.5hf, 2.5hf, 3.5hf);
  const f16vec4 x = f16vec4(float16_t(p.x)), y = f16vec4(float16_t(p.y));
  for (uint i = 0u; i < p.iterations; ++i) {
    for (int k = 0; k < ACC; ++k) a[k] = fma(a[k], x, y);
  }
  f16vec4 s = f16vec4(0.0hf);
  for (int k = 0; k < ACC; ++k) s += a[k];
  result[gid] = float(s.x) + float(s.y) + float(s.z) + float(s.w);
}
