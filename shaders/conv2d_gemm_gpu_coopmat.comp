#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
// Conv2D as an implicit GEMM in fp16 precision on the device's matrix units
// (gpu_tile_matrix.glsl: 16 x 16 x 16 cooperative matrices, binary16
// operands, fp32 accumulators). Same bindings, spec constants, grid and
// results (within fp32 summation order) as conv2d_gemm_gpu_fp16, which the runtime
// runs instead unless this kernel passes its load-time check
// (docs/kernels.md "Cooperative-matrix kernels"). Requires shaderFloat16,
// sharedMemory32KiB, vulkanMemoryModel and cooperativeMatrixNV16x16x16f16f32.
#define GPU_TILE_F16 1
#define GPU_TILE_MATRIX 1
#include "conv2d_gemm_gpu.glsl"
