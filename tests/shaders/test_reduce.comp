#version 450
// Test shader for the GPU layer: subgroup arithmetic and float/uint atomics. Each invocation
// also reports its subgroup coordinates so the test can rebuild the subgroup scan on the CPU.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_atomic_float : require
#include "common.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer In { float x[]; };
layout(std430, binding = 1) buffer Sum { float fsum; uint usum; uint count; };
layout(std430, binding = 2) writeonly buffer Scan { uvec4 scan[]; };  // [n] scan, subgroup id, lane, workgroup

layout(push_constant) uniform Push { uint n; };

void main()
{
    uint i = splat_global_id();
    bool live = i < n;
    float v = live ? x[i] : 0.0;
    uint u = live ? uint(int(v * 8.0) + 64) : 0u;
    float s = subgroupAdd(v);
    uint su = subgroupAdd(u);
    uint c = subgroupAdd(live ? 1u : 0u);
    uint incl = subgroupInclusiveAdd(u);
    if (subgroupElect()) {
        atomicAdd(fsum, s);
        atomicAdd(usum, su);
        atomicAdd(count, c);
    }
    uint wg = gl_WorkGroupID.y * SPLAT_GRID_X + gl_WorkGroupID.x;
    if (live) scan[i] = uvec4(incl, gl_SubgroupID, gl_SubgroupInvocationID, wg);
}
