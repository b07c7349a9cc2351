#version 450
#extension GL_GOOGLE_include_directive : require
// Resize 2-D, CPU-class twin (bundle features kernel_variants and
// texel_bindings, docs/bundle-format.md): the same kernel with its inputs read
// through uniform texel buffers (texelFetch), which llvmpipe gathers with
// vector code instead of a per-lane loop.
#define TEXEL_READS 1
#include "resize2d.glsl"
