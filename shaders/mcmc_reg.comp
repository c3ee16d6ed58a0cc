#version 450
// MCMC, the regularisers' gradients (docs/TRAIN.md, "MCMC"), added to the render's before Adam:
// loss += 0.01 mean(opacity) + 0.01 mean(scale / u) over every Gaussian (and axis), the scale in
// gsplat's world unit u (docs/TRAIN.md, "The world unit"), so dL/dlogit += 0.01 / N o (1 - o)
// and dL/dlog_scale += (0.01 / u) / (3 N) scale (the slot's scale_reg is 0.01 / u).
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 256) in;

layout(std430, binding = MCMC_REG_SLOTS) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = MCMC_REG_OPACITIES) readonly buffer Opac { float opacities[]; };    // [N]
layout(std430, binding = MCMC_REG_SCALES) readonly buffer Scales { float log_scales[]; };    // [N,3]
layout(std430, binding = MCMC_REG_GRAD_OPACITIES) buffer GOpac { float g_opacities[]; };     // [N]
layout(std430, binding = MCMC_REG_GRAD_SCALES) buffer GScales { float g_log_scales[]; };     // [N,3]
layout(push_constant) uniform Push { splat_mcmc_push pc; };

void main()
{
    uint i = splat_global_id();
    uint n = slots[pc.slot].frame.n_gaussians;
    if (i >= n) return;
    // o (1 - o) = e / (1 + e)^2 with e = exp(-|x|): no 1 - o, which float rounds away near 1
    float e = exp(-abs(opacities[i]));
    g_opacities[i] += float(SPLAT_MCMC_OPACITY_REG) / float(n) * (e / ((1.0 + e) * (1.0 + e)));
    float c = slots[pc.slot].scale_reg / (3.0 * float(n));
    for (uint k = 0u; k < 3u; k++) g_log_scales[3u * i + k] += c * exp(log_scales[3u * i + k]);
}
