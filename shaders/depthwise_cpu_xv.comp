#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class depthwise Conv (depthwise_cpu.glsl), binding types "vffsf": X
// through an R32G32B32A32_SFLOAT texel view (input rows of a multiple of 4
// elements, stride 1: the row segment of a kernel row in at most six vec4
// fetches), W, bias and residual through R32_SFLOAT views.
#define X_VEC4 1
#include "depthwise_cpu.glsl"
