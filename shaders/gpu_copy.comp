#version 450
// Copy, one uint per thread (gpu_copy.glsl).
#define WORD uint
#include "gpu_copy.glsl"
