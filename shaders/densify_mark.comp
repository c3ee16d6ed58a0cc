#version 450
// Densification, first pass: what becomes of each Gaussian (kept, cloned, split, pruned), as
// counts the scans turn into destinations. Also counts the decisions for the report.
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "common.glsl"
#include "train_types.h"
#include "densify_common.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = DENSIFY_MARK_SCALES) readonly buffer Scales { float log_scales[]; };  // [N,3]
layout(std430, binding = DENSIFY_MARK_OPACITIES) readonly buffer Opac { float opacities[]; };  // [N]
layout(std430, binding = DENSIFY_MARK_STATS) readonly buffer Stats { vec4 stats[]; };          // [N]
layout(std430, binding = DENSIFY_MARK_KEEP) writeonly buffer Keep { uint n_keep[]; };          // [N] 0/1
layout(std430, binding = DENSIFY_MARK_CLONE) writeonly buffer Clone { uint n_clone[]; };       // [N] 0/1
layout(std430, binding = DENSIFY_MARK_SPLIT) writeonly buffer Split { uint n_split[]; };       // [N] 0/2
layout(std430, binding = DENSIFY_MARK_INFO) buffer Info { uint grew_clone; uint grew_split; };
layout(push_constant) uniform Push { splat_train_push pc; };

void main()
{
    uint i = splat_global_id();
    bool live = i < pc.n;
    Decision d;
    d.grew_clone = d.grew_split = false;
    if (live) {
        d = decide(stats[i], vec3(log_scales[3u * i], log_scales[3u * i + 1u], log_scales[3u * i + 2u]), opacities[i],
                   pc.scene_scale, pc.step, pc.flags);
        n_keep[i] = d.keep;
        n_clone[i] = d.clone;
        n_split[i] = d.split;
    }
    uint c = subgroupAdd(d.grew_clone ? 1u : 0u), s = subgroupAdd(d.grew_split ? 1u : 0u);
    if (subgroupElect()) {
        if (c != 0u) atomicAdd(grew_clone, c);
        if (s != 0u) atomicAdd(grew_split, s);
    }
}
