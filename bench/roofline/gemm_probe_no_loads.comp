#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W and L from registers: no loads in the loop (upper bound).
#define W_SRC 4
#define L_SRC 2
#include "gemm_probe.glsl"
