#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Row mean (GlobalAveragePool, ReduceMean over the last axes) with the row's
// sum reduced by subgroupAdd. A GPU-class row of the bundle feature
// device_variants (docs/bundle-format.md, "Device-specific variants"):
// requires subgroupArithmetic (subgroup BASIC + ARITHMETIC in compute).
#define SUBGROUP_REDUCE 1
#include "reduce_mean.glsl"
