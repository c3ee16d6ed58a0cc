#version 450
// Test shader for the stream: x = x * a + b, so the result depends on the order of dispatches.
#include "common.glsl"

layout(local_size_x = 128) in;
layout(std430, binding = 0) buffer Data { float x[]; };
layout(push_constant) uniform Push { uint n; float a; float b; };

void main()
{
    uint i = splat_global_id();
    if (i >= n) return;
    // precise: no contraction to fma, so the GPU rounds the product and the sum separately,
    // exactly like the CPU oracle (Vulkan makes both operations correctly rounded).
    precise float y = x[i] * a + b;
    x[i] = y;
}
