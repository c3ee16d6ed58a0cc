#version 450
// Adam over every parameter group in one dispatch, one thread per Gaussian (docs/TRAIN.md).
// Moments live beside each group as [N][2][width] (m then v). SH coefficients above the active
// degree have zero gradients and zero moments, so skipping them changes nothing.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 128) in;

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

float B1 = float(SPLAT_ADAM_B1), B2 = float(SPLAT_ADAM_B2), EPS = float(SPLAT_ADAM_EPS);

// torch.optim.Adam: p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
float step_one(float p, float g, inout float m, inout float v, float step_size, float bias2)
{
    m = B1 * m + (1.0 - B1) * g;
    v = B2 * v + (1.0 - B2) * g * g;
    return p - step_size * m / (sqrt(v) / bias2 + EPS);
}

#define ADAM_GROUP(P, G, MV, width, first, count, lr)                                    \
    {                                                                                    \
        float step_size = (lr) / s.bias1;                                                \
        for (uint k = (first); k < (first) + (count); k++) {                             \
            uint pi = i * (width) + k, mi = 2u * i * (width) + k;                        \
            float m = MV[mi], v = MV[mi + (width)];                                      \
            P[pi] = step_one(P[pi], G[pi], m, v, step_size, s.bias2);                    \
            MV[mi] = m;                                                                  \
            MV[mi + (width)] = v;                                                        \
        }                                                                                \
    }

void main()
{
    uint i = splat_global_id();
    splat_train_slot s = slots[pc.slot];
    if (i >= s.n_gaussians || gate != 0u) return;
    ADAM_GROUP(means, g_means, mv_means, 3u, 0u, 3u, s.lr[0])
    ADAM_GROUP(log_scales, g_scales, mv_scales, 3u, 0u, 3u, s.lr[1])
    ADAM_GROUP(quats, g_quats, mv_quats, 4u, 0u, 4u, s.lr[2])
    ADAM_GROUP(opacities, g_opac, mv_opac, 1u, 0u, 1u, s.lr[3])
    ADAM_GROUP(sh, g_sh, mv_sh, 48u, 0u, 3u, s.lr[4])
    uint n_active = (s.sh_degree + 1u) * (s.sh_degree + 1u);
    ADAM_GROUP(sh, g_sh, mv_sh, 48u, 3u, 3u * (n_active - 1u), s.lr[5])
}
