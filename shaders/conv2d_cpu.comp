#version 450
#extension GL_GOOGLE_include_directive : require
// CPU-class Conv kernel (filter width KW in {1, 2, 3, 4, 6}, X read as R32 texels); the body and its description are in
// conv2d_cpu.glsl. binding_types "fvfsf".
#define CONV_X_VEC4 0
#define CONV_WIDE 0
#include "conv2d_cpu.glsl"
