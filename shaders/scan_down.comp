#version 450
// Prefix scan, step 3: scans each block of WG * KPT elements, starting from the block's offset
// (the exclusive scan of the block sums). `in` and `out` may be the same range: every element
// is read and written by the same invocation.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KPT = 16u;
layout(constant_id = 2) const uint INCLUSIVE = 0u;
layout(constant_id = 3) const uint MAX_SUBGROUPS = 32u;
#include "sort_common.glsl"

layout(std430, binding = 0) readonly buffer Header { uint header[]; };
layout(std430, binding = 1) readonly buffer In { uint x[]; };          // [count]
layout(std430, binding = 2) writeonly buffer Out { uint y[]; };        // [count]
layout(std430, binding = 3) readonly buffer Sums { uint offsets[]; };  // [blocks] scanned block sums

void main()
{
    uint block = splat_group_index();
    if (block >= header[SETUP_GROUPS]) return;
    const uint WG = gl_WorkGroupSize.x;
    uint n = header[SETUP_COUNT];
    uint lane = gl_SubgroupInvocationID, sg_size = gl_SubgroupSize;
    uint seg = block * (WG * KPT) + gl_SubgroupID * sg_size * KPT;
    uint v[KPT];
    uint run = 0u;
    for (uint k = 0u; k < KPT; k++) {
        uint i = seg + k * sg_size + lane;
        uint a = i < n ? x[i] : 0u;
        v[k] = run + (INCLUSIVE != 0u ? subgroupInclusiveAdd(a) : subgroupExclusiveAdd(a));
        run += subgroupAdd(a);
    }
    uint total;
    uint off = offsets[block] + wg_exclusive_add(lane == sg_size - 1u ? run : 0u, total);
    for (uint k = 0u; k < KPT; k++) {
        uint i = seg + k * sg_size + lane;
        if (i < n) y[i] = off + v[k];
    }
}
