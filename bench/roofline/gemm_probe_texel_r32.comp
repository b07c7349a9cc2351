#version 450
#extension GL_GOOGLE_include_directive : require
// GEMM load-path probe: W and L from uniform texel buffers of R32 texels (four scalar texelFetch per vec4).
#define W_SRC 6
#define L_SRC 5
#include "gemm_probe.glsl"
