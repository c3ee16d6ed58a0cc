#version 450
// MCMC, the position noise of a step (docs/TRAIN.md, "MCMC"): mean += Sigma (w z), Sigma = R
// diag(scale^2) R^T, w = sigmoid(-100 (opacity - 0.005)) x the step's noise scale, z three
// normals of the counter-based generator (seed ^ step, the Gaussian, pairs 0 and 1). In an
// iteration (MCMC_MODE_SLOT) after Adam, skipped with Adam behind a closed gate and where the
// slot's scale is 0 (a refine step: the strategy adds it after the refine); or (MCMC_MODE_PUSH)
// as the push constants say.
#include "common.glsl"
#include "train_types.h"
#include "render_types.h"
#include "render_common.glsl"
#include "rng.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = MCMC_NOISE_SLOTS) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = MCMC_NOISE_GATE) readonly buffer Gate { uint gate; };
layout(std430, binding = MCMC_NOISE_MEANS) buffer Means { float means[]; };                  // [N,3]
layout(std430, binding = MCMC_NOISE_SCALES) readonly buffer Scales { float log_scales[]; };  // [N,3]
layout(std430, binding = MCMC_NOISE_QUATS) readonly buffer Quats { float quats[]; };         // [N,4]
layout(std430, binding = MCMC_NOISE_OPACITIES) readonly buffer Opac { float opacities[]; };  // [N]
layout(push_constant) uniform Push { splat_mcmc_push pc; };

void main()
{
    uint i = splat_global_id();
    uint n = pc.n, step = pc.step;
    float scale = pc.scale;
    if (pc.mode == MCMC_MODE_SLOT) {
        if (gate != 0u) return;
        n = slots[pc.slot].frame.n_gaussians;
        step = slots[pc.slot].step;
        scale = slots[pc.slot].noise_scale;
    }
    if (i >= n || scale == 0.0) return;
    float o = 1.0 / (1.0 + exp(-opacities[i]));
    float w = scale / (1.0 + exp(float(SPLAT_MCMC_NOISE_K) * (o - float(SPLAT_MCMC_NOISE_T))));
    uint seed = pc.seed ^ step;
    vec2 p0 = rng_normal_pair(seed, i, 0u), p1 = rng_normal_pair(seed, i, 1u);
    vec3 z = w * vec3(p0.x, p0.y, p1.x);
    vec4 q = vec4(quats[4u * i], quats[4u * i + 1u], quats[4u * i + 2u], quats[4u * i + 3u]);
    mat3 R = quat_to_rot(q * inversesqrt(dot(q, q)));
    vec3 s2 = exp(2.0 * vec3(log_scales[3u * i], log_scales[3u * i + 1u], log_scales[3u * i + 2u]));
    vec3 d = R * (s2 * (transpose(R) * z));
    for (uint k = 0u; k < 3u; k++) means[3u * i + k] += d[k];
}
