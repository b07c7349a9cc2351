#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class depthwise Conv (depthwise_cpu.glsl), binding types "fffsf": X, W,
// bias and residual through R32_SFLOAT texel views (one fetch per element).
#define X_VEC4 0
#include "depthwise_cpu.glsl"
