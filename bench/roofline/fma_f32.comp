#version 450
// Sustained fp32 FMA rate: every invocation runs `iterations` rounds of
// 4 * ACC independent FMA chains (ACC vec4 accumulators), a = a * x + y.
// x and y are push constants, so no compiler can fold the loop; the
// accumulators converge to y / (1 - x), which the host checks.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const int ACC = 4;
layout(std430, set = 0, binding = 0) writeonly buffer Out { float result[]; };
layout(push_constant) uniform P { uint iterations; float x; float y; } p;

void main() {
  const uint gid = gl_GlobalInvocationID.x;
  vec4 a[ACC];
  for (int k = 0; k < ACC; ++k) a[k] = vec4(float(gid % 7u) + float(k), 1.5, 2.5, 3.5);
  const vec4 x = vec4(p.x), y = vec4(p.y);
  for (uint i = 0u; i < p.iterations; ++i) {
    for (int k = 0; k < ACC; ++k) a[k] = fma(a[k], x, y);
  }
  vec4 s = vec4(0.0);
  for (int k = 0; k < ACC; ++k) s += a[k];
  result[gid] = s.x + s.y + s.z + s.w;
}
