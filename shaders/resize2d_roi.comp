#version 450
#extension GL_GOOGLE_include_directive : require
// Resize 2-D, tf_crop_and_resize with the roi read at run time from binding 2:
// storage-buffer reads (the default kernel table).
#define ROI_BINDING 1
#include "resize2d.glsl"
