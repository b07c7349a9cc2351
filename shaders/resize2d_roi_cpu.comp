#version 450
#extension GL_GOOGLE_include_directive : require
// Resize 2-D, tf_crop_and_resize with the roi read at run time, CPU-class
// twin: X read through a uniform texel buffer (bundle features
// kernel_variants and texel_bindings).
#define TEXEL_READS 1
#define ROI_BINDING 1
#include "resize2d.glsl"
