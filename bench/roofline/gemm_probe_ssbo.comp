#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W and L from SSBOs as vec4 (gemm_cpu's fast path).
#define W_SRC 0
#define L_SRC 0
#include "gemm_probe.glsl"
