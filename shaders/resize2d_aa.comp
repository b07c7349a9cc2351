#version 450
#extension GL_GOOGLE_include_directive : require
// Resize 2-D with antialias = 1 (linear and cubic modes; nearest ignores it):
// the resize2d kernel with the antialiasing filter of
// resize2d_antialias.glsl; same bindings and specialization constants.
#define ANTIALIAS 1
#include "resize2d.glsl"
