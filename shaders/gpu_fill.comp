#version 450
// Fill, one uint per thread (gpu_copy.glsl).
#define GPU_FILL
#define WORD uint
#include "gpu_copy.glsl"
