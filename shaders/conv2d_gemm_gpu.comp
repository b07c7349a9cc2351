#version 450
#extension GL_GOOGLE_include_directive : require
// Conv2D as an implicit GEMM with the GPU-class tile, fp32 weights (a row of
// program.dispatch.gpu; requires sharedMemory32KiB).
#include "conv2d_gemm_gpu.glsl"
