#version 450
// Densification under a budget (docs/TRAIN.md, "A budget"): after densify_mark and the scans, cuts
// the clones and splits that do not fit. A clone is made when its rank among the surviving clones
// is below pc.clones, a split when its rank among the splits with surviving children is below
// pc.splits; a split not made leaves its Gaussian unsplit, kept unless the prune removes it. Each
// thread reads and rewrites only its own Gaussian's counts, which the scans then redo.
#include "common.glsl"
#include "train_types.h"
#include "densify_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = DENSIFY_BUDGET_SCALES) readonly buffer Scales { float log_scales[]; };  // [N,3]
layout(std430, binding = DENSIFY_BUDGET_OPACITIES) readonly buffer Opac { float opacities[]; };  // [N]
layout(std430, binding = DENSIFY_BUDGET_KEEP) buffer Keep { uint n_keep[]; };                     // [N] 0/1
layout(std430, binding = DENSIFY_BUDGET_CLONE) buffer Clone { uint n_clone[]; };                  // [N] 0/1
layout(std430, binding = DENSIFY_BUDGET_SPLIT) buffer Split { uint n_split[]; };                  // [N] 0/2
layout(std430, binding = DENSIFY_BUDGET_OFF_CLONE) readonly buffer OffClone { uint off_clone[]; }; // [N] exclusive scans
layout(std430, binding = DENSIFY_BUDGET_OFF_SPLIT) readonly buffer OffSplit { uint off_split[]; };
layout(push_constant) uniform Push { splat_budget_push pc; };

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n) return;
    if (n_clone[i] != 0u && off_clone[i] >= pc.clones) n_clone[i] = 0u;
    if (n_split[i] != 0u && off_split[i] / 2u >= pc.splits) {
        // whether it stays unsplit does not depend on the gradient statistics
        Decision d = decide(vec4(0.0), vec3(log_scales[3u * i], log_scales[3u * i + 1u], log_scales[3u * i + 2u]),
                            opacities[i], pc.scene_scale, pc.step, pc.flags);
        n_split[i] = 0u;
        n_keep[i] = d.keep_unsplit;
    }
}
