#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W and L from uniform texel buffers (texelFetch).
#define W_SRC 5
#define L_SRC 3
#include "gemm_probe.glsl"
