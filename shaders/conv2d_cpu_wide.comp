#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class Conv kernel (filter width KW = 5, 7 or > 7, X read as R32 texels); the body and its description are in
// conv2d_cpu.glsl. binding_types "fvfsf".
#define CONV_X_VEC4 0
#define CONV_WIDE 1
#include "conv2d_cpu.glsl"
