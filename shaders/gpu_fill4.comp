#version 450
// Fill, one uvec4 per thread (gpu_copy.glsl).
#define GPU_FILL
#define WORD uvec4
#include "gpu_copy.glsl"
