#version 450
#extension GL_GOOGLE_include_directive : require
// ConvTranspose 2-D, direct form: storage-buffer reads (the default kernel table).
#include "conv_transpose2d.glsl"
