#version 450
// Test shader for indirect dispatch. Mode 0 (one invocation): turns the count a previous
// dispatch wrote into dispatch arguments. Mode 1: writes f(i) for i < count.
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint MODE = 0;

layout(std430, binding = 0) buffer Count { uint count; uint args[3]; };
layout(std430, binding = 1) writeonly buffer Out { uint y[]; };

void main()
{
    if (MODE == 0u) {
        if (gl_GlobalInvocationID.x == 0u) {
            uvec3 g = splat_grid(count, 64u);
            args[0] = g.x; args[1] = g.y; args[2] = g.z;
        }
    } else {
        uint i = splat_global_id();
        if (i < count) y[i] = i * 3u + 1u;
    }
}
