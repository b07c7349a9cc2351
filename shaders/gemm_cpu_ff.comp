#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class Gemm / MatMul (gemm_cpu.glsl), binding types "fffs": A and B
// through R32_SFLOAT texel views (one fetch per element), for layouts where
// neither operand's rows are vec4-aligned.
#define A_VEC4 0
#define B_VEC4 0
#include "gemm_cpu.glsl"
