#version 450
#extension GL_GOOGLE_include_directive : require
// Resize 2-D with antialias = 1 and the scales read at run time from binding
// 2 (bundle feature float_value_symbols): resize2d_aa's filter with
// resize2d_scales' bindings and specialization constants.
#define ANTIALIAS 1
#define SCALES_BINDING 1
#include "resize2d.glsl"
