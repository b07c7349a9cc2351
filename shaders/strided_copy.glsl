// Body of strided_copy.comp and strided_copy_cpu.comp (included after #version).
// Y[OUT_BASE + sum(i_d * SO_d)] = X[IN_BASE + sum(i_d * SI_d)] over the index
// space D0..D5 (right-aligned, unused = 1). Transpose (permuted input strides),
// Concat (one dispatch per input, output strides of the concatenated tensor)
// and plain copies.
layout(local_size_x = 256) in;
#ifdef TEXEL_READS
layout(set = 0, binding = 0) uniform usamplerBuffer x_t;  // binding types "us": R32_UINT, bits unchanged
#define LOAD_X(i) texelFetch(x_t, int(i)).x
#else
layout(set = 0, binding = 0) readonly buffer X_ { uint x[]; };  // 32-bit words: float32 or int32
#define LOAD_X(i) x[i]
#endif
layout(set = 0, binding = 1) writeonly buffer Y_ { uint y[]; };
layout(constant_id = 0) const uint N = 1;
layout(constant_id = 1) const uint IN_BASE = 0;
layout(constant_id = 2) const uint OUT_BASE = 0;
layout(constant_id = 3) const uint D0 = 1;
layout(constant_id = 4) const uint D1 = 1;
layout(constant_id = 5) const uint D2 = 1;
layout(constant_id = 6) const uint D3 = 1;
layout(constant_id = 7) const uint D4 = 1;
layout(constant_id = 8) const uint D5 = 1;
layout(constant_id = 9) const uint SI0 = 0;
layout(constant_id = 10) const uint SI1 = 0;
layout(constant_id = 11) const uint SI2 = 0;
layout(constant_id = 12) const uint SI3 = 0;
layout(constant_id = 13) const uint SI4 = 0;
layout(constant_id = 14) const uint SI5 = 0;
layout(constant_id = 15) const uint SO0 = 0;
layout(constant_id = 16) const uint SO1 = 0;
layout(constant_id = 17) const uint SO2 = 0;
layout(constant_id = 18) const uint SO3 = 0;
layout(constant_id = 19) const uint SO4 = 0;
layout(constant_id = 20) const uint SO5 = 0;
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint r = i;
  uint i5 = r % D5; r /= D5;
  uint i4 = r % D4; r /= D4;
  uint i3 = r % D3; r /= D3;
  uint i2 = r % D2; r /= D2;
  uint i1 = r % D1; r /= D1;
  uint i0 = r;
  uint si = IN_BASE + i0 * SI0 + i1 * SI1 + i2 * SI2 + i3 * SI3 + i4 * SI4 + i5 * SI5;
  uint so = OUT_BASE + i0 * SO0 + i1 * SO1 + i2 * SO2 + i3 * SO3 + i4 * SO4 + i5 * SO5;
  y[so] = LOAD_X(si);
}
