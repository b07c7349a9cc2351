#version 450
#extension GL_GOOGLE_include_directive : require
// MaxPool / AveragePool: storage-buffer reads (the default kernel table).
#include "pool2d.glsl"
