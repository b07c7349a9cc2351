#version 450
#extension GL_GOOGLE_include_directive : require
// Conv2D as an implicit GEMM, fp32 weights (the default kernel table).
#include "conv2d_gemm.glsl"
