#version 450
// One invocation: reads the element count from the caller's buffer (clamped to the capacity)
// and writes the scratch header: count, number of tiles/blocks, and the indirect dispatch
// arguments for one workgroup per tile/block. Used by the sort and the scan, so no host read
// of the count is ever needed.
#include "common.glsl"
#include "sort/sort_shared.h"

layout(local_size_x = 1) in;
layout(std430, binding = 0) readonly buffer Count { uint count_in; };
layout(std430, binding = 1) writeonly buffer Header { uint header[]; };
layout(push_constant) uniform Push SPLAT_SETUP_PUSH pc;

void main()
{
    uint n = pc.has_count != 0u ? min(count_in, pc.max_count) : pc.max_count;
    uint groups = n / pc.tile + (n % pc.tile != 0u ? 1u : 0u);
    uvec3 g = splat_grid(groups, 1u);
    header[SETUP_COUNT] = n;
    header[SETUP_GROUPS] = groups;
    header[2] = 0u;
    header[3] = 0u;
    header[SETUP_ARGS + 0] = g.x;
    header[SETUP_ARGS + 1] = g.y;
    header[SETUP_ARGS + 2] = g.z;
    header[7] = 0u;
}
