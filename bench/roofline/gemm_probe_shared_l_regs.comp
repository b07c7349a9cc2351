#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W from shared memory, L from registers.
#define W_SRC 3
#define L_SRC 2
#include "gemm_probe.glsl"
