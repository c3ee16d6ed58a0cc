#version 450
// Densification, second pass: writes every Gaussian's rows into the new arrays, in the order of
// docs/TRAIN.md (survivors, then clones, then first split children, then second ones). Adam
// moments move with survivors and start at zero for new rows. A pass writes only the outputs
// pc.outputs names; the bindings of the others are placeholders it never touches. In place
// (pc.append_at, the arrays bound on both sides have room): the new rows only, after the old
// ones, which they are made from and which densify_compact then moves up.
#include "common.glsl"
#include "train_types.h"
#include "render_types.h"
#include "render_common.glsl"
#include "densify_common.glsl"

layout(local_size_x = 128) in;

layout(std430, binding = DENSIFY_APPLY_TOTALS) readonly buffer Totals { uint total_keep; uint total_clone; uint total_split; };
layout(std430, binding = DENSIFY_APPLY_OFF_KEEP) readonly buffer OffKeep { uint off_keep[]; };  // exclusive scans
layout(std430, binding = DENSIFY_APPLY_OFF_CLONE) readonly buffer OffClone { uint off_clone[]; };
layout(std430, binding = DENSIFY_APPLY_OFF_SPLIT) readonly buffer OffSplit { uint off_split[]; };
layout(std430, binding = DENSIFY_APPLY_KEEP) readonly buffer Keep { uint n_keep[]; };
layout(std430, binding = DENSIFY_APPLY_CLONE) readonly buffer Clone { uint n_clone[]; };
layout(std430, binding = DENSIFY_APPLY_SPLIT) readonly buffer Split { uint n_split[]; };
// Per group of core/params.h: the old and the new parameters [N,width] and moments [N,width
// SPLAT_MOMENT_WORDS(flags)] (words, moved as they are).
#define DECLARE(G, name, NAME, width, head, LRH, LRR, flags)                                                  \
    layout(std430, binding = DENSIFY_APPLY_SRC_PARAMS + G) readonly buffer SP_##name { float s_##name[]; };  \
    layout(std430, binding = DENSIFY_APPLY_SRC_MOMENTS + G) readonly buffer SM_##name { uint s_mv_##name[]; };  \
    layout(std430, binding = DENSIFY_APPLY_DST_PARAMS + G) writeonly buffer DP_##name { float d_##name[]; }; \
    layout(std430, binding = DENSIFY_APPLY_DST_MOMENTS + G) writeonly buffer DM_##name { uint d_mv_##name[]; };
SPLAT_PARAM_GROUPS(DECLARE)
layout(push_constant) uniform Push { splat_apply_push pc; };

// Copies parameters (and, with moments, the Adam state; else zeros) from row `src` to row `dst`.
#define COPY(G, name, NAME, width, head, LRH, LRR, flags)                                               \
    if (writes(G))                                                                                      \
        for (uint k = 0u; k < uint(width); k++) d_##name[uint(width) * dst + k] = s_##name[uint(width) * src + k]; \
    if (writes(SPLAT_APPLY_MOMENTS + G))                                                                \
        for (uint k = 0u; k < SPLAT_MOMENT_WORDS(flags) * uint(width); k++)                                     \
            d_mv_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * dst + k] =                                   \
                moments ? s_mv_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * src + k] : 0u;
bool writes(uint bit) { return (pc.outputs & (1u << bit)) != 0u; }
void copy_row(uint src, uint dst, bool moments)
{
    SPLAT_PARAM_GROUPS(COPY)
}

// Where new row `pos` of the new arrays goes: there, or in place after the old rows.
uint new_row(uint pos) { return pc.append_at != 0u ? pc.append_at + (pos - total_keep) : pos; }

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n) return;
    if (n_keep[i] != 0u && pc.append_at == 0u) copy_row(i, off_keep[i], true);
    if (n_clone[i] != 0u) copy_row(i, new_row(total_keep + off_clone[i]), false);
    if (n_split[i] != 0u) {
        uint s = off_split[i] / 2u, n_splits = total_split / 2u;
        for (uint c = 0u; c < 2u; c++) copy_row(i, new_row(total_keep + total_clone + c * n_splits + s), false);
        if (!writes(SPLAT_GROUP_MEANS) && !writes(SPLAT_GROUP_LOG_SCALES)) return;
        vec3 ls = vec3(s_log_scales[3u * i], s_log_scales[3u * i + 1u], s_log_scales[3u * i + 2u]);
        vec3 scale = exp(ls);
        vec4 q = vec4(s_quats[4u * i], s_quats[4u * i + 1u], s_quats[4u * i + 2u], s_quats[4u * i + 3u]);
        mat3 Rq = quat_to_rot(q * inversesqrt(dot(q, q)));
        vec3 mu = vec3(s_means[3u * i], s_means[3u * i + 1u], s_means[3u * i + 2u]);
        vec2 p0 = rng_normal_pair(pc.seed, i, 0u), p1 = rng_normal_pair(pc.seed, i, 1u), p2 = rng_normal_pair(pc.seed, i, 2u);
        vec3 z[2] = vec3[2](vec3(p0.x, p0.y, p1.x), vec3(p1.y, p2.x, p2.y));
        vec3 child_ls = log(scale / float(SPLIT_SHRINK));
        for (uint c = 0u; c < 2u; c++) {
            uint d = new_row(total_keep + total_clone + c * n_splits + s);
            vec3 m = mu + Rq * (scale * z[c]);
            for (uint k = 0u; k < 3u; k++) {
                if (writes(SPLAT_GROUP_MEANS)) d_means[3u * d + k] = m[k];
                if (writes(SPLAT_GROUP_LOG_SCALES)) d_log_scales[3u * d + k] = child_ls[k];
            }
        }
    }
}
