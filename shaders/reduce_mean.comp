#version 450
#extension GL_GOOGLE_include_directive : require
// Row mean (GlobalAveragePool, ReduceMean over the last axis): storage-buffer reads (the default kernel table).
#include "reduce_mean.glsl"
