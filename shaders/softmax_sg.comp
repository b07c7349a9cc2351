#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// Softmax / LogSoftmax / Hardmax along one axis with the row's max and sum
// merged by subgroup operations. A GPU-class row of the bundle feature
// device_variants (docs/bundle-format.md, "Device-specific variants"):
// requires subgroupArithmetic (subgroup BASIC + ARITHMETIC in compute).
#define SUBGROUP_REDUCE 1
#include "softmax.glsl"
