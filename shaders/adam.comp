#version 450
// Adam over every parameter group in one dispatch (docs/TRAIN.md), one thread per parameter
// element, so that neighbouring threads touch neighbouring floats: the groups are laid end to
// end (means 3N, log-scales 3N, quaternions 4N, opacities N, SH 48N) and each thread finds its
// group by range. Moments live beside each group as [N][2][width] (m then v). SH coefficients
// above the active degree have zero gradients and zero moments, so skipping them changes
// nothing.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 256) in;

layout(std430, binding = 0) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = 1) readonly buffer Gate { uint gate; };
layout(std430, binding = 2) buffer Means { float means[]; };
layout(std430, binding = 3) buffer Scales { float log_scales[]; };
layout(std430, binding = 4) buffer Quats { float quats[]; };
layout(std430, binding = 5) buffer Opac { float opacities[]; };
layout(std430, binding = 6) buffer SH { float sh[]; };
layout(std430, binding = 7) readonly buffer GMeans { float g_means[]; };
layout(std430, binding = 8) readonly buffer GScales { float g_scales[]; };
layout(std430, binding = 9) readonly buffer GQuats { float g_quats[]; };
layout(std430, binding = 10) readonly buffer GOpac { float g_opac[]; };
layout(std430, binding = 11) readonly buffer GSH { float g_sh[]; };
layout(std430, binding = 12) buffer MVMeans { float mv_means[]; };   // [N,2,3]
layout(std430, binding = 13) buffer MVScales { float mv_scales[]; }; // [N,2,3]
layout(std430, binding = 14) buffer MVQuats { float mv_quats[]; };   // [N,2,4]
layout(std430, binding = 15) buffer MVOpac { float mv_opac[]; };     // [N,2]
layout(std430, binding = 16) buffer MVSH { float mv_sh[]; };         // [N,2,48]
layout(push_constant) uniform Push { splat_train_push pc; };

const float B1 = float(SPLAT_ADAM_B1), B2 = float(SPLAT_ADAM_B2), EPS = float(SPLAT_ADAM_EPS);

// torch.optim.Adam: p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
float step_one(float p, float g, inout float m, inout float v, float step_size, float bias2)
{
    m = B1 * m + (1.0 - B1) * g;
    v = B2 * v + (1.0 - B2) * g * g;
    return p - step_size * m / (sqrt(v) / bias2 + EPS);
}

// Element e of a group of `width` floats per Gaussian: its parameter index and moment indices.
#define ADAM_ELEMENT(P, G, MV, width, e, lr)                                             \
    {                                                                                    \
        uint gi = (e) / (width), k = (e) - gi * (width);                                 \
        uint mi = 2u * gi * (width) + k;                                                 \
        float m = MV[mi], v = MV[mi + (width)];                                          \
        P[e] = step_one(P[e], G[e], m, v, (lr) / s.bias1, s.bias2);                       \
        MV[mi] = m;                                                                      \
        MV[mi + (width)] = v;                                                            \
    }

void main()
{
    uint e = splat_global_id();
    splat_train_slot s = slots[pc.slot];
    uint n = s.n_gaussians;
    if (gate != 0u) return;
    if (e < 3u * n) {
        ADAM_ELEMENT(means, g_means, mv_means, 3u, e, s.lr[0])
        return;
    }
    e -= 3u * n;
    if (e < 3u * n) {
        ADAM_ELEMENT(log_scales, g_scales, mv_scales, 3u, e, s.lr[1])
        return;
    }
    e -= 3u * n;
    if (e < 4u * n) {
        ADAM_ELEMENT(quats, g_quats, mv_quats, 4u, e, s.lr[2])
        return;
    }
    e -= 4u * n;
    if (e < n) {
        ADAM_ELEMENT(opacities, g_opac, mv_opac, 1u, e, s.lr[3])
        return;
    }
    e -= n;
    if (e < 48u * n) {
        uint coeff = (e % 48u) / 3u;
        uint n_active = (s.sh_degree + 1u) * (s.sh_degree + 1u);
        if (coeff >= n_active) return;
        ADAM_ELEMENT(sh, g_sh, mv_sh, 48u, e, coeff == 0u ? s.lr[4] : s.lr[5])
    }
}
