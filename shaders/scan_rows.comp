#version 450
// Exclusive prefix sum of each row of a [rows][n] array in place (n = the header's group
// count), one workgroup per row, a chunk of WG * KPT at a time with a running carry; the row's
// sum goes to totals[row]. The sort scans its digit-major tile histograms with it (256 rows);
// the scan scans its block sums with it (one row; the total is the caller's).
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint KPT = 16u;
layout(constant_id = 3) const uint MAX_SUBGROUPS = 32u;
#include "sort_common.glsl"

layout(std430, binding = 0) readonly buffer Header { uint header[]; };
layout(std430, binding = 1) buffer Data { uint data[]; };                // [rows][n]
layout(std430, binding = 2) writeonly buffer Totals { uint totals[]; };  // [rows]

void main()
{
    const uint WG = gl_WorkGroupSize.x;
    uint row = gl_WorkGroupID.x;
    uint n = header[SETUP_GROUPS];
    uint base = row * n;
    uint lane = gl_SubgroupInvocationID, sg_size = gl_SubgroupSize;
    // Short rows (the sort's, with few tiles) take chunks of fewer elements per invocation;
    // `per` is uniform, and the loops stay bounded by KPT so that drivers can unroll them and
    // keep v[] in registers.
    uint per = clamp((n + WG - 1u) / WG, 1u, KPT);
    // Each subgroup scans a contiguous segment of sg_size * per elements, sg_size at a time.
    uint seg = gl_SubgroupID * sg_size * per;
    uint carry = 0u;
    uint v[KPT];
    for (uint c = 0u; c < n; c += WG * per) {
        uint run = 0u;
        for (uint k = 0u; k < KPT; k++) {
            if (k == per) break;
            uint i = c + seg + k * sg_size + lane;
            uint x = i < n ? data[base + i] : 0u;
            v[k] = run + subgroupExclusiveAdd(x);
            run += subgroupAdd(x);
        }
        uint total;
        // Only the last lane contributes, so every lane gets the sum of the earlier subgroups.
        uint off = carry + wg_exclusive_add(lane == sg_size - 1u ? run : 0u, total);
        for (uint k = 0u; k < KPT; k++) {
            if (k == per) break;
            uint i = c + seg + k * sg_size + lane;
            if (i < n) data[base + i] = off + v[k];
        }
        carry += total;
    }
    if (gl_LocalInvocationID.x == 0u) totals[row] = carry;
}
