#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from a UBO (vec4), L from a storage texel buffer (imageLoad).
#define W_SRC 2
#define L_SRC 4
#include "gemm_probe.glsl"
