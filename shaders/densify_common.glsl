// The decisions of gsplat's default strategy (docs/TRAIN.md "Densification"), shared by the
// marking and the applying kernel so they can never disagree.
#ifndef SPLAT_DENSIFY_COMMON_GLSL
#define SPLAT_DENSIFY_COMMON_GLSL

#include "rng.glsl"

#define GROW_GRAD2D 0.0002
#define GROW_SCALE3D 0.01
#define PRUNE_OPA 0.005
#define PRUNE_SCALE3D 0.1
#define SPLIT_SHRINK 1.6

struct Decision {
    uint keep;   // 1: the Gaussian stays
    uint clone;  // 1: a copy is appended
    uint split;  // 2: two children are appended (the Gaussian itself goes); 0 otherwise
    uint keep_unsplit;  // 1: the Gaussian would stay if it were not split (a budget's cut)
    bool grew_clone, grew_split;  // decisions before pruning (for the report)
};

// The densification statistic: the average screen-space gradient norm, grad2d / max(count, 1).
// decide compares it with GROW_GRAD2D; a budget ranks the growth by it (densify_rank).
float grad_stat(vec4 stats) { return stats.x / max(stats.y, 1.0); }

Decision decide(vec4 stats, vec3 log_scale, float opacity_logit, float scene_scale, uint step, uint large_after)
{
    float avg = grad_stat(stats);
    bool high = avg > float(GROW_GRAD2D);
    float max_scale = exp(max(log_scale.x, max(log_scale.y, log_scale.z)));
    bool small = max_scale <= float(GROW_SCALE3D) * scene_scale;
    bool transparent = 1.0 / (1.0 + exp(-opacity_logit)) < float(PRUNE_OPA);
    bool large_rule = step > large_after;  // gsplat: after the first opacity reset
    bool prune_self = transparent || (large_rule && max_scale > float(PRUNE_SCALE3D) * scene_scale);
    bool prune_child = transparent || (large_rule && max_scale / float(SPLIT_SHRINK) > float(PRUNE_SCALE3D) * scene_scale);
    Decision d;
    d.grew_clone = high && small;
    d.grew_split = high && !small;
    d.keep = (!d.grew_split && !prune_self) ? 1u : 0u;
    d.clone = (d.grew_clone && !prune_self) ? 1u : 0u;
    d.split = (d.grew_split && !prune_child) ? 2u : 0u;
    d.keep_unsplit = prune_self ? 0u : 1u;
    return d;
}

#endif
