#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from an SSBO as scalars (4 loads per vec4), L as vec4.
#define W_SRC 1
#define L_SRC 0
#include "gemm_probe.glsl"
