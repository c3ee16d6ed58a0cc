#version 450
// Densification under a budget (docs/TRAIN.md, "A budget"), after densify_rank and the sort: one
// thread per rank; the candidates ranked at pc.made or later are cut. A clone cut is not made; a
// split cut leaves its Gaussian unsplit, kept unless the prune removes it. The sorted rows are a
// permutation, so each thread rewrites only its own Gaussian's counts, which the scans then redo.
#include "common.glsl"
#include "train_types.h"
#include "densify_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = DENSIFY_BUDGET_SCALES) readonly buffer Scales { float log_scales[]; };  // [N,3]
layout(std430, binding = DENSIFY_BUDGET_OPACITIES) readonly buffer Opac { float opacities[]; };  // [N]
layout(std430, binding = DENSIFY_BUDGET_KEEP) buffer Keep { uint n_keep[]; };                     // [N] 0/1
layout(std430, binding = DENSIFY_BUDGET_CLONE) buffer Clone { uint n_clone[]; };                  // [N] 0/1
layout(std430, binding = DENSIFY_BUDGET_SPLIT) buffer Split { uint n_split[]; };                  // [N] 0/2
layout(std430, binding = DENSIFY_BUDGET_KEYS) readonly buffer Keys { uint keys[]; };             // [N] sorted
layout(std430, binding = DENSIFY_BUDGET_ROWS) readonly buffer Rows { uint rows[]; };             // [N] rows by rank
layout(push_constant) uniform Push { splat_budget_push pc; };

void main()
{
    uint r = splat_global_id();
    if (r >= pc.n || r < pc.made || keys[r] == 0xffffffffu) return;
    uint i = rows[r];
    n_clone[i] = 0u;
    if (n_split[i] != 0u) {
        // whether it stays unsplit does not depend on the gradient statistics
        Decision d = decide(vec4(0.0), vec3(log_scales[3u * i], log_scales[3u * i + 1u], log_scales[3u * i + 2u]),
                            opacities[i], pc.scene_scale, pc.step, pc.flags);
        n_split[i] = 0u;
        n_keep[i] = d.keep_unsplit;
    }
}
