#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class Gemm / MatMul (gemm_cpu.glsl), binding types "vvfs": A and B
// through R32G32B32A32_SFLOAT texel views (vec4 fetches), the fast path.
#define A_VEC4 1
#define B_VEC4 1
#include "gemm_cpu.glsl"
