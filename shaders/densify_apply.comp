#version 450
// Densification, second pass: writes every Gaussian's rows into the new arrays, in the order of
// docs/TRAIN.md (survivors, then clones, then first split children, then second ones). Adam
// moments move with survivors and start at zero for new rows.
#include "common.glsl"
#include "train_types.h"
#include "render_types.h"
#include "render_common.glsl"
#include "densify_common.glsl"

layout(local_size_x = 128) in;

layout(std430, binding = 0) readonly buffer Totals { uint total_keep; uint total_clone; uint total_split; };
layout(std430, binding = 1) readonly buffer OffKeep { uint off_keep[]; };     // exclusive scans
layout(std430, binding = 2) readonly buffer OffClone { uint off_clone[]; };
layout(std430, binding = 3) readonly buffer OffSplit { uint off_split[]; };
layout(std430, binding = 4) readonly buffer Keep { uint n_keep[]; };
layout(std430, binding = 5) readonly buffer Clone { uint n_clone[]; };
layout(std430, binding = 6) readonly buffer Split { uint n_split[]; };
layout(std430, binding = 7) readonly buffer SMeans { float s_means[]; };
layout(std430, binding = 8) readonly buffer SScales { float s_scales[]; };
layout(std430, binding = 9) readonly buffer SQuats { vec4 s_quats[]; };
layout(std430, binding = 10) readonly buffer SOpac { float s_opac[]; };
layout(std430, binding = 11) readonly buffer SSH { float s_sh[]; };
layout(std430, binding = 12) readonly buffer SMVMeans { float s_mv_means[]; };
layout(std430, binding = 13) readonly buffer SMVScales { float s_mv_scales[]; };
layout(std430, binding = 14) readonly buffer SMVQuats { float s_mv_quats[]; };
layout(std430, binding = 15) readonly buffer SMVOpac { float s_mv_opac[]; };
layout(std430, binding = 16) readonly buffer SMVSH { float s_mv_sh[]; };
layout(std430, binding = 17) writeonly buffer DMeans { float d_means[]; };
layout(std430, binding = 18) writeonly buffer DScales { float d_scales[]; };
layout(std430, binding = 19) writeonly buffer DQuats { vec4 d_quats[]; };
layout(std430, binding = 20) writeonly buffer DOpac { float d_opac[]; };
layout(std430, binding = 21) writeonly buffer DSH { float d_sh[]; };
layout(std430, binding = 22) writeonly buffer DMVMeans { float d_mv_means[]; };
layout(std430, binding = 23) writeonly buffer DMVScales { float d_mv_scales[]; };
layout(std430, binding = 24) writeonly buffer DMVQuats { float d_mv_quats[]; };
layout(std430, binding = 25) writeonly buffer DMVOpac { float d_mv_opac[]; };
layout(std430, binding = 26) writeonly buffer DMVSH { float d_mv_sh[]; };
layout(push_constant) uniform Push { splat_train_push pc; };

// Copies parameters (and, with moments, the Adam state; else zeros) from row i to row d.
void copy_row(uint i, uint d, bool moments)
{
    for (uint k = 0u; k < 3u; k++) {
        d_means[3u * d + k] = s_means[3u * i + k];
        d_scales[3u * d + k] = s_scales[3u * i + k];
    }
    d_quats[d] = s_quats[i];
    d_opac[d] = s_opac[i];
    for (uint k = 0u; k < 48u; k++) d_sh[48u * d + k] = s_sh[48u * i + k];
    for (uint k = 0u; k < 6u; k++) {
        d_mv_means[6u * d + k] = moments ? s_mv_means[6u * i + k] : 0.0;
        d_mv_scales[6u * d + k] = moments ? s_mv_scales[6u * i + k] : 0.0;
    }
    for (uint k = 0u; k < 8u; k++) d_mv_quats[8u * d + k] = moments ? s_mv_quats[8u * i + k] : 0.0;
    for (uint k = 0u; k < 2u; k++) d_mv_opac[2u * d + k] = moments ? s_mv_opac[2u * i + k] : 0.0;
    for (uint k = 0u; k < 96u; k++) d_mv_sh[96u * d + k] = moments ? s_mv_sh[96u * i + k] : 0.0;
}

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n) return;
    if (n_keep[i] != 0u) copy_row(i, off_keep[i], true);
    if (n_clone[i] != 0u) copy_row(i, total_keep + off_clone[i], false);
    if (n_split[i] != 0u) {
        uint s = off_split[i] / 2u, n_splits = total_split / 2u;
        vec3 ls = vec3(s_scales[3u * i], s_scales[3u * i + 1u], s_scales[3u * i + 2u]);
        vec3 scale = exp(ls);
        vec4 q = s_quats[i];
        mat3 Rq = quat_to_rot(q * inversesqrt(dot(q, q)));
        vec3 mu = vec3(s_means[3u * i], s_means[3u * i + 1u], s_means[3u * i + 2u]);
        vec2 p0 = rng_normal_pair(pc.seed, i, 0u), p1 = rng_normal_pair(pc.seed, i, 1u), p2 = rng_normal_pair(pc.seed, i, 2u);
        vec3 z[2] = vec3[2](vec3(p0.x, p0.y, p1.x), vec3(p1.y, p2.x, p2.y));
        vec3 child_ls = log(scale / float(SPLIT_SHRINK));
        for (uint c = 0u; c < 2u; c++) {
            uint d = total_keep + total_clone + c * n_splits + s;
            copy_row(i, d, false);
            vec3 m = mu + Rq * (scale * z[c]);
            for (uint k = 0u; k < 3u; k++) {
                d_means[3u * d + k] = m[k];
                d_scales[3u * d + k] = child_ls[k];
            }
        }
    }
}
