#version 450
// Densification in place, after densify_apply wrote the new rows after the old ones: moves every
// survivor to its final row (docs/TRAIN.md's order: survivors, then the new rows), a chunk of
// rows at a time through a scratch. A survivor never moves down (its final row is at most its
// row), so when the chunks run in order, phase 0 of a chunk reads rows no earlier chunk has
// written, and phase 1 writes rows no later chunk reads. The values move unchanged, as words.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 128) in;

layout(std430, binding = DENSIFY_COMPACT_TOTALS) readonly buffer Totals { uint total_keep; uint total_clone; uint total_split; };
layout(std430, binding = DENSIFY_COMPACT_OFF_KEEP) readonly buffer OffKeep { uint off_keep[]; };  // exclusive scan
layout(std430, binding = DENSIFY_COMPACT_KEEP) readonly buffer Keep { uint n_keep[]; };
layout(std430, binding = DENSIFY_COMPACT_SCRATCH) buffer Scratch { uint scratch[]; };  // by group: [rows, width] parameters, [rows, SPLAT_MOMENT_WORDS(flags) width] moments
#define DECLARE(G, name, NAME, width, head, LRH, LRR, flags)                                          \
    layout(std430, binding = DENSIFY_COMPACT_PARAMS + G) buffer P_##name { uint p_##name[]; };        \
    layout(std430, binding = DENSIFY_COMPACT_MOMENTS + G) buffer M_##name { uint mv_##name[]; };
SPLAT_PARAM_GROUPS(DECLARE)
layout(push_constant) uniform Push { splat_compact_push pc; };

// One thread a 32-bit element (a parameter's float or a word of moments): the chunk's elements
// are taken group by group, parameters then moments (each a segment of the scratch, pc.rows rows
// of its width), row by row, so that neighbouring threads read and write neighbouring elements
// and each waits on one load. (A thread a row, moving its 177
// floats one after the other, made each refine in place about 7 ms on the H100 at 900k rows,
// docs/PERFORMANCE.md.)
#define SEGMENT(G, name, NAME, width, head, LRH, LRR, flags)                                         \
    if (e < pc.rows * uint(width)) {                                                                 \
        move_element(p_##name, uint(width), e, seg);                                                    \
        return;                                                                                       \
    }                                                                                                 \
    e -= pc.rows * uint(width), seg += pc.rows * uint(width);                                         \
    if (e < pc.rows * SPLAT_MOMENT_WORDS(flags) * uint(width)) {                                            \
        move_element(mv_##name, SPLAT_MOMENT_WORDS(flags) * uint(width), e, seg);                              \
        return;                                                                                       \
    }                                                                                                 \
    e -= pc.rows * SPLAT_MOMENT_WORDS(flags) * uint(width), seg += pc.rows * SPLAT_MOMENT_WORDS(flags) * uint(width);

// The final row of row i, and whether it survives.
uint final_row(uint i) { return i < pc.n ? off_keep[i] : total_keep + (i - pc.n); }
bool survives(uint i) { return i >= pc.n || n_keep[i] != 0u; }

// Element k of slot j of a segment of `width` elements a row (e = j width + k), starting at seg in
// the scratch. Phase 0: slot j is the chunk's row first + j, and goes to the scratch slot of its
// final row; phase 1: slot j is the chunk's final row base + j, and comes back from it.
#define move_element(arr, width, e, seg)                                                              \
    {                                                                                               \
        uint j = (e) / (width), k = (e) - j * (width);                                              \
        if (pc.phase == 0u) {                                                                       \
            uint row = pc.first + j;                                                                \
            if (row < last && survives(row)) scratch[(seg) + (final_row(row) - base) * (width) + k] = arr[(width) * row + k]; \
        } else if (j < count) {                                                                     \
            arr[(width) * (base + j) + k] = scratch[(seg) + j * (width) + k];                       \
        }                                                                                           \
    }

void main()
{
    uint e = splat_global_id();
    uint end = pc.n + total_clone + total_split;
    uint last = min(pc.first + pc.rows, end);
    if (pc.first >= last) return;
    uint base = final_row(pc.first);
    uint count = final_row(last) - base; // (phase 1) the final rows the chunk's survivors fill
    uint seg = 0u;
    SPLAT_PARAM_GROUPS(SEGMENT)
}
