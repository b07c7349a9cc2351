#version 450
#extension GL_GOOGLE_include_directive : require
// Elementwise binary op with broadcasting: storage-buffer reads (the default kernel table).
#include "eltwise.glsl"
