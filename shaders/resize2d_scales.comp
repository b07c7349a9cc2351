#version 450
#extension GL_GOOGLE_include_directive : require
// Resize 2-D with the scales read at run time from binding 2 (bundle feature
// float_value_symbols): storage-buffer reads (the default kernel table).
#define SCALES_BINDING 1
#include "resize2d.glsl"
