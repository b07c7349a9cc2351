#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
// gemm_gpu with a constant B (binding 1) stored as IEEE binary16 and
// converted to fp32 at the load; fp32 accumulation. Requires
// storageBuffer16BitAccess and sharedMemory32KiB (docs/bundle-format.md,
// "Device-specific variants").
#define F16_WEIGHTS 1
#include "gemm_gpu.glsl"
