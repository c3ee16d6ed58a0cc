#version 450
// Densification in place, after densify_apply wrote the new rows after the old ones: moves every
// survivor to its final row (docs/TRAIN.md's order: survivors, then the new rows), a chunk of
// rows at a time through a scratch. A survivor never moves down (its final row is at most its
// row), so when the chunks run in order, phase 0 of a chunk reads rows no earlier chunk has
// written, and phase 1 writes rows no later chunk reads. The values move unchanged.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 128) in;

layout(std430, binding = DENSIFY_COMPACT_TOTALS) readonly buffer Totals { uint total_keep; uint total_clone; uint total_split; };
layout(std430, binding = DENSIFY_COMPACT_OFF_KEEP) readonly buffer OffKeep { uint off_keep[]; };  // exclusive scan
layout(std430, binding = DENSIFY_COMPACT_KEEP) readonly buffer Keep { uint n_keep[]; };
layout(std430, binding = DENSIFY_COMPACT_SCRATCH) buffer Scratch { float scratch[]; };  // [rows, 3 SPLAT_PARAM_FLOATS]
#define DECLARE(G, name, NAME, width, head, LRH, LRR, flags)                                          \
    layout(std430, binding = DENSIFY_COMPACT_PARAMS + G) buffer P_##name { float p_##name[]; };       \
    layout(std430, binding = DENSIFY_COMPACT_MOMENTS + G) buffer M_##name { float mv_##name[]; };
SPLAT_PARAM_GROUPS(DECLARE)
layout(push_constant) uniform Push { splat_compact_push pc; };

const uint ROW = 3u * uint(SPLAT_PARAM_FLOATS); // a scratch row: every group's parameters, then moments

// The final row of row i, and whether it survives.
uint final_row(uint i) { return i < pc.n ? off_keep[i] : total_keep + (i - pc.n); }
bool survives(uint i) { return i >= pc.n || n_keep[i] != 0u; }

#define TO_SCRATCH(G, name, NAME, width, head, LRH, LRR, flags)                                      \
    for (uint k = 0u; k < uint(width); k++) scratch[s + po + k] = p_##name[uint(width) * row + k];    \
    for (uint k = 0u; k < 2u * uint(width); k++) scratch[s + mo + k] = mv_##name[2u * uint(width) * row + k]; \
    po += uint(width);                                                                                \
    mo += 2u * uint(width);
#define FROM_SCRATCH(G, name, NAME, width, head, LRH, LRR, flags)                                    \
    for (uint k = 0u; k < uint(width); k++) p_##name[uint(width) * row + k] = scratch[s + po + k];    \
    for (uint k = 0u; k < 2u * uint(width); k++) mv_##name[2u * uint(width) * row + k] = scratch[s + mo + k]; \
    po += uint(width);                                                                                \
    mo += 2u * uint(width);

void main()
{
    uint t = splat_global_id();
    uint end = pc.n + total_clone + total_split;
    uint last = min(pc.first + pc.rows, end);
    if (pc.first >= last) return;
    uint base = final_row(pc.first);
    uint po = 0u, mo = uint(SPLAT_PARAM_FLOATS);
    if (pc.phase == 0u) {
        uint row = pc.first + t;
        if (row >= last || !survives(row)) return;
        uint s = ROW * (final_row(row) - base);
        SPLAT_PARAM_GROUPS(TO_SCRATCH)
    } else {
        uint count = final_row(last) - base;
        if (t >= count) return;
        uint row = base + t, s = ROW * t;
        SPLAT_PARAM_GROUPS(FROM_SCRATCH)
    }
}
