#version 450
#extension GL_GOOGLE_include_directive : require
// Batched GEMM (Gemm and MatMul), fp32 operands (the default kernel table).
#include "gemm.glsl"
