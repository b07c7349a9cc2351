#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from a uniform texel buffer (texelFetch), L from registers.
#define W_SRC 5
#define L_SRC 2
#include "gemm_probe.glsl"
