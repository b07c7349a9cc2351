#version 450
#extension GL_GOOGLE_include_directive : require
// Strided copy (Transpose, Concat, copies): storage-buffer reads (the default kernel table).
#include "strided_copy.glsl"
