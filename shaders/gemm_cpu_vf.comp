#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class Gemm / MatMul (gemm_cpu.glsl), binding types "vffs": A through an
// R32G32B32A32_SFLOAT texel view (vec4 fetches), B through an R32_SFLOAT view
// (one fetch per element: its rows are not vec4-aligned).
#define A_VEC4 1
#define B_VEC4 0
#include "gemm_cpu.glsl"
