#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class Conv kernel (filter width KW in {1, 2, 3, 4, 6}, input width W % 4 == 0: X read as RGBA32 texels); the body and its description are in
// conv2d_cpu.glsl. binding_types "vvfsf".
#define CONV_X_VEC4 1
#define CONV_WIDE 0
#include "conv2d_cpu.glsl"
