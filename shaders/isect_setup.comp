#version 450
// One invocation between the scan and the emission: flags an intersection overflow (the host
// learns of it when it retires the submission, grows the buffers and renders again) and sizes
// the per-intersection dispatches from the count, so the host never reads it in the loop.
#include "common.glsl"
#include "render_types.h"

layout(local_size_x = 1) in;
layout(std430, binding = ISECT_SETUP_COUNTERS) buffer Count { splat_counters counters; };
layout(std430, binding = ISECT_SETUP_SCAN_TOTAL) readonly buffer Total { uint scan_total; };   // the scan's total
layout(std430, binding = ISECT_SETUP_SORT_COUNT) writeonly buffer Valid { uint sort_count; };  // what the sort reads
layout(push_constant) uniform Push { splat_render_push pc; };

void main()
{
    uint n = scan_total;
    counters.n_isect = n;
    counters.overflow = n > pc.isect_capacity ? 1u : 0u;
    counters.n_valid = min(n, pc.isect_capacity);
    sort_count = counters.n_valid;
    uvec3 g = splat_grid(counters.n_valid, 256u);
    counters.isect_groups[0] = g.x;
    counters.isect_groups[1] = g.y;
    counters.isect_groups[2] = g.z;
}
