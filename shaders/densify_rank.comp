#version 450
// Densification under a budget (docs/TRAIN.md, "A budget"), first pass: the sort keys that rank
// the growth candidates (a clone of a survivor, a split whose children survive: each adds one
// Gaussian) by the densification statistic, largest first. A positive float orders as its bits,
// so ~bits sorts ascending into descending statistics; the stable sort keeps equal keys in row
// order, which breaks ties by row. Every other row gets the largest key and sorts last.
#include "common.glsl"
#include "train_types.h"
#include "densify_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = DENSIFY_RANK_STATS) readonly buffer Stats { vec4 stats[]; };   // [N]
layout(std430, binding = DENSIFY_RANK_CLONE) readonly buffer Clone { uint n_clone[]; };  // [N] 0/1
layout(std430, binding = DENSIFY_RANK_SPLIT) readonly buffer Split { uint n_split[]; };  // [N] 0/2
layout(std430, binding = DENSIFY_RANK_KEYS) writeonly buffer Keys { uint keys[]; };     // [N]
layout(std430, binding = DENSIFY_RANK_ROWS) writeonly buffer Rows { uint rows[]; };     // [N]
layout(push_constant) uniform Push { splat_budget_push pc; };

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n) return;
    // a candidate's statistic passed decide's threshold: positive, so its key is below 0xffffffff
    bool candidate = n_clone[i] != 0u || n_split[i] != 0u;
    keys[i] = candidate ? ~floatBitsToUint(grad_stat(stats[i])) : 0xffffffffu;
    rows[i] = i;
}
