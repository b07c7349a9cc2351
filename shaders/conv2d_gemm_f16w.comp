#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// Conv2D as an implicit GEMM with W (binding 1) stored as IEEE binary16 and
// converted to fp32 at the load; fp32 accumulation. A GPU-class row of the
// bundle feature device_variants (docs/bundle-format.md, "Device-specific
// variants"): requires storageBuffer16BitAccess (not shaderFloat16: no
// 16-bit arithmetic).
#define F16_WEIGHTS 1
#include "conv2d_gemm.glsl"
