#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from shared memory filled once per workgroup, L from an SSBO (vec4).
#define W_SRC 3
#define L_SRC 0
#include "gemm_probe.glsl"
