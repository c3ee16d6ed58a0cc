#version 450
// Prefix scan, step 1: the sum of each block of WG * KPT elements.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KPT = 16u;
layout(constant_id = 3) const uint MAX_SUBGROUPS = 32u;
#include "sort_common.glsl"

layout(std430, binding = 0) readonly buffer Header { uint header[]; };
layout(std430, binding = 1) readonly buffer In { uint x[]; };        // [count]
layout(std430, binding = 2) writeonly buffer Sums { uint sums[]; };  // [blocks]

void main()
{
    uint block = splat_group_index();
    if (block >= header[SETUP_GROUPS]) return;
    const uint WG = gl_WorkGroupSize.x;
    uint n = header[SETUP_COUNT];
    uint start = block * (WG * KPT);
    uint s = 0u;
    for (uint k = 0u; k < KPT; k++) {
        uint i = start + k * WG + gl_LocalInvocationID.x;
        if (i < n) s += x[i];
    }
    uint total;
    wg_exclusive_add(s, total);
    if (gl_LocalInvocationID.x == 0u) sums[block] = total;
}
