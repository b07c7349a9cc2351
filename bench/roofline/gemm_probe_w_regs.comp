#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from registers (no W loads in the loop), L from an SSBO (vec4).
#define W_SRC 4
#define L_SRC 0
#include "gemm_probe.glsl"
