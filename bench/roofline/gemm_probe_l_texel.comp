#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from an SSBO (vec4), L from a uniform texel buffer (texelFetch).
#define W_SRC 0
#define L_SRC 3
#include "gemm_probe.glsl"
