#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// Batched GEMM with the GPU-class tile in fp16 precision (runtime argument
// precision=fp16): the shared slices in binary16, exact products in fp32,
// fp32 sums (docs/kernels.md "fp16 precision"). Same bindings, spec constants
// and grid as gemm_gpu; requires shaderFloat16.
#define GPU_TILE_F16 1
#include "gemm_gpu.glsl"
