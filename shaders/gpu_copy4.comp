#version 450
// Copy, one uvec4 per thread (gpu_copy.glsl).
#define WORD uvec4
#include "gpu_copy.glsl"
