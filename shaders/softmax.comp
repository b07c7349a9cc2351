#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax / LogSoftmax / Hardmax along one axis, shared-memory tree merge (the default kernel table).
#include "softmax.glsl"
