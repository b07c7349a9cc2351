#version 450
#extension GL_GOOGLE_include_directive : require
// Batched GEMM with the GPU-class tile, fp32 operands (a row of
// program.dispatch.gpu; requires sharedMemory32KiB).
#include "gemm_gpu.glsl"
