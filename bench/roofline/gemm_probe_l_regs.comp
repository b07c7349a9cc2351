#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from an SSBO (vec4), L from registers (no L loads in the loop).
#define W_SRC 0
#define L_SRC 2
#include "gemm_probe.glsl"
