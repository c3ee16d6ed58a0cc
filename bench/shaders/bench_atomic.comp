#version 450
// Benchmark shader: float atomic adds spread over `buckets` addresses (contention knob).
#extension GL_EXT_shader_atomic_float : require
#include "common.glsl"

layout(local_size_x = 256) in;
layout(std430, binding = 0) buffer Out { float acc[]; };
layout(push_constant) uniform Push { uint n; uint buckets; };

void main()
{
    uint i = splat_global_id();
    if (i >= n) return;
    atomicAdd(acc[(i * 2654435761u) % buckets], 1.0);
}
