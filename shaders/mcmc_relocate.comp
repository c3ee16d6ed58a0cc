#version 450
// MCMC, eq. 9 of "3D Gaussian Splatting as Markov Chain Monte Carlo" (docs/TRAIN.md, "MCMC"):
// every sampled Gaussian, sampled c times, becomes one of ratio = min(c + 1, 51): opacity
// o' = clamp(1 - (1 - o)^(1 / ratio), 0.005, 1 - 2^-23) and scale x o / D, D = sum_{k=1..ratio}
// (-1)^(k-1) C(ratio, k) o'^k / sqrt(k) (gsplat's double sum, summed over i first: C(ratio, k) =
// sum_i C(i - 1, k - 1)). The relocation also zeroes its Adam moments, as gsplat does.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 128) in;

layout(std430, binding = MCMC_RELOCATE_COUNTS) readonly buffer Counts { uint counts[]; };  // [N]
layout(std430, binding = MCMC_RELOCATE_OPACITIES) buffer Opac { float opacities[]; };      // [N] logits
layout(std430, binding = MCMC_RELOCATE_SCALES) buffer Scales { float log_scales[]; };      // [N,3]
// Per group of core/params.h: the moments [N,width SPLAT_MOMENT_WORDS(flags)].
#define DECLARE(G, name, NAME, width, head, LRH, LRR, flags) \
    layout(std430, binding = MCMC_RELOCATE_MOMENTS + G) writeonly buffer M_##name { uint m_##name[]; };
SPLAT_PARAM_GROUPS(DECLARE)
layout(push_constant) uniform Push { splat_mcmc_push pc; };

#define ZERO(G, name, NAME, width, head, LRH, LRR, flags) \
    for (uint k = 0u; k < SPLAT_MOMENT_WORDS(flags) * uint(width); k++) m_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * i + k] = 0u;

// log(1 + e) for e in [0, 1], and 1 - exp(-y) for y >= 0, to float's relative precision: the
// series where the plain forms would cancel.
float log1p_small(float e)
{
    if (e >= 0.125) return log(1.0 + e);
    float sum = 0.0, power = e;
    for (int k = 1; k <= 9; k++, power *= -e) sum += power / float(k);
    return sum;
}

float one_minus_exp_neg(float y)
{
    if (y >= 0.125) return 1.0 - exp(-y);
    float sum = 0.0, term = y;
    for (int k = 2; k <= 9; k++) {
        sum += term;
        term *= -y / float(k);
    }
    return sum;
}

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n || counts[i] == 0u) return;
    uint ratio = min(counts[i] + 1u, uint(SPLAT_MCMC_N_MAX));
    // From the logit x rather than the opacity o, which float holds too coarsely near 1 (gsplat
    // evaluates the same in float from o): -log(1 - o) = softplus(x), 1 - o' = exp(-softplus(x) /
    // ratio), logit(o') = log(o') + softplus(x) / ratio.
    float x = opacities[i];
    float softplus = max(x, 0.0) + log1p_small(exp(-abs(x)));
    float y = softplus / float(ratio);
    float o_new = one_minus_exp_neg(y), log_rest = -y;  // log(1 - o')
    const float lo = float(SPLAT_MCMC_MIN_OPACITY), hi = 1.0 - 1.0 / 8388608.0;
    if (o_new < lo) o_new = lo, log_rest = log(1.0 - lo);
    if (o_new > hi) o_new = hi, log_rest = log(1.0 - hi);
    float binom = 1.0, power = 1.0, denom = 0.0;
    for (uint k = 1u; k <= ratio; k++) {
        binom *= float(ratio - k + 1u) / float(k);
        power *= o_new;
        float term = binom * power * inversesqrt(float(k));
        denom += (k & 1u) != 0u ? term : -term;
    }
    float log_o = -max(-x, 0.0) - log1p_small(exp(-abs(x)));  // log(sigmoid(x))
    float log_coeff = log_o - log(denom);
    opacities[i] = log(o_new) - log_rest;
    for (uint k = 0u; k < 3u; k++) log_scales[3u * i + k] += log_coeff;
    if (pc.mode == MCMC_MODE_RELOCATE) {
        SPLAT_PARAM_GROUPS(ZERO)
    }
}
