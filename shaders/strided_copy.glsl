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
#include "params.glsl"
layout(constant_id = 0) const uint N_SC = 1;
#define N PARAM_U(N_SC)
layout(constant_id = 1) const uint IN_BASE_SC = 0;
#define IN_BASE PARAM_U(IN_BASE_SC)
layout(constant_id = 2) const uint OUT_BASE_SC = 0;
#define OUT_BASE PARAM_U(OUT_BASE_SC)
layout(constant_id = 3) const uint D0_SC = 1;
#define D0 PARAM_U(D0_SC)
layout(constant_id = 4) const uint D1_SC = 1;
#define D1 PARAM_U(D1_SC)
layout(constant_id = 5) const uint D2_SC = 1;
#define D2 PARAM_U(D2_SC)
layout(constant_id = 6) const uint D3_SC = 1;
#define D3 PARAM_U(D3_SC)
layout(constant_id = 7) const uint D4_SC = 1;
#define D4 PARAM_U(D4_SC)
layout(constant_id = 8) const uint D5_SC = 1;
#define D5 PARAM_U(D5_SC)
layout(constant_id = 9) const uint SI0_SC = 0;
#define SI0 PARAM_U(SI0_SC)
layout(constant_id = 10) const uint SI1_SC = 0;
#define SI1 PARAM_U(SI1_SC)
layout(constant_id = 11) const uint SI2_SC = 0;
#define SI2 PARAM_U(SI2_SC)
layout(constant_id = 12) const uint SI3_SC = 0;
#define SI3 PARAM_U(SI3_SC)
layout(constant_id = 13) const uint SI4_SC = 0;
#define SI4 PARAM_U(SI4_SC)
layout(constant_id = 14) const uint SI5_SC = 0;
#define SI5 PARAM_U(SI5_SC)
layout(constant_id = 15) const uint SO0_SC = 0;
#define SO0 PARAM_U(SO0_SC)
layout(constant_id = 16) const uint SO1_SC = 0;
#define SO1 PARAM_U(SO1_SC)
layout(constant_id = 17) const uint SO2_SC = 0;
#define SO2 PARAM_U(SO2_SC)
layout(constant_id = 18) const uint SO3_SC = 0;
#define SO3 PARAM_U(SO3_SC)
layout(constant_id = 19) const uint SO4_SC = 0;
#define SO4 PARAM_U(SO4_SC)
layout(constant_id = 20) const uint SO5_SC = 0;
#define SO5 PARAM_U(SO5_SC)
#include "common.glsl"
void main() {
  uint i = linear_index_256();
  if (i >= N) return;
  uint r = i;
  uint q5 = div_p(r, D5_SC), i5 = r - q5 * D5; r = q5;
  uint q4 = div_p(r, D4_SC), i4 = r - q4 * D4; r = q4;
  uint q3 = div_p(r, D3_SC), i3 = r - q3 * D3; r = q3;
  uint q2 = div_p(r, D2_SC), i2 = r - q2 * D2; r = q2;
  uint q1 = div_p(r, D1_SC), i1 = r - q1 * D1; r = q1;
  uint i0 = r;
  uint si = IN_BASE + i0 * SI0 + i1 * SI1 + i2 * SI2 + i3 * SI3 + i4 * SI4 + i5 * SI5;
  uint so = OUT_BASE + i0 * SO0 + i1 * SO1 + i2 * SO2 + i3 * SO3 + i4 * SO4 + i5 * SO5;
  y[so] = LOAD_X(si);
}
