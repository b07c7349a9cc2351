// Input X (float32) at set 0, binding 0, read as LOAD_X(i) = X[i]: through a
// storage buffer in the default kernel, through a uniform texel buffer
// (R32_SFLOAT view, binding type 'f') when the including CPU-class twin
// defines TEXEL_READS (bundle feature texel_bindings, docs/bundle-format.md).
#ifdef TEXEL_READS
layout(set = 0, binding = 0) uniform samplerBuffer x_t;
#define LOAD_X(i) texelFetch(x_t, int(i)).x
#else
layout(set = 0, binding = 0) readonly buffer X_ { float x[]; };
#define LOAD_X(i) x[i]
#endif
