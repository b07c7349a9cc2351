#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W as vec4, L from an SSBO as scalars.
#define W_SRC 0
#define L_SRC 1
#include "gemm_probe.glsl"
