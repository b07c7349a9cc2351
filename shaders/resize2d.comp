#version 450
#extension GL_GOOGLE_include_directive : require
// Resize 2-D: storage-buffer reads (the default kernel table).
#include "resize2d.glsl"
