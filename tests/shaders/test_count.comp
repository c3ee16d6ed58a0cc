#version 450
// Test shader: counts the elements above a threshold, the way stages report sizes for
// indirect dispatch (the count is never read by the host in the loop).
#include "common.glsl"

layout(local_size_x = 64) in;
layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) buffer Count { uint count; uint args[3]; };
layout(push_constant) uniform Push { uint n; float threshold; };

void main()
{
    uint i = splat_global_id();
    if (i < n && x[i] > threshold) atomicAdd(count, 1u);
}
