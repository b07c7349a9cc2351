#version 450
#extension GL_GOOGLE_include_directive : require
// Standalone activation: storage-buffer reads (the default kernel table).
#include "unary.glsl"
