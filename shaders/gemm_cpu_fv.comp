#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class Gemm / MatMul (gemm_cpu.glsl), binding types "fvfs": A through an
// R32_SFLOAT texel view (one fetch per element: its rows are not vec4-aligned),
// B through an R32G32B32A32_SFLOAT view (vec4 fetches).
#define A_VEC4 0
#define B_VEC4 1
#include "gemm_cpu.glsl"
