#version 450
// MCMC, sampling weights (docs/TRAIN.md, "MCMC: sampling"): each Gaussian's weight from its
// opacity logit's bin, max(1, table[bin] >> shift); in the relocation dead ones weigh 0. Also
// flags the dead and clears the samples' counts.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 256) in;

layout(std430, binding = MCMC_WEIGHTS_OPACITIES) readonly buffer Opac { float opacities[]; };  // [N] logits
layout(std430, binding = MCMC_WEIGHTS_TABLE) readonly buffer Table { uint table[]; };          // [BINS] floor(65536 sigmoid)
layout(std430, binding = MCMC_WEIGHTS_DEAD) writeonly buffer Dead { uint dead[]; };            // [N] 0/1
layout(std430, binding = MCMC_WEIGHTS_WEIGHTS) writeonly buffer Weights { uint weights[]; };   // [N]
layout(std430, binding = MCMC_WEIGHTS_COUNTS) writeonly buffer Counts { uint counts[]; };      // [N]
layout(push_constant) uniform Push { splat_mcmc_push pc; };

void main()
{
    uint i = splat_global_id();
    if (i >= pc.n) return;
    float x = opacities[i];
    bool is_dead = x <= float(SPLAT_MCMC_DEAD_LOGIT);
    // x * 128 is exact, so the bin is the reference's
    float b = clamp(floor(x * float(SPLAT_MCMC_BIN_SCALE)), -float(SPLAT_MCMC_BINS / 2), float(SPLAT_MCMC_BINS / 2 - 1));
    uint w = max(1u, table[uint(int(b) + SPLAT_MCMC_BINS / 2)] >> pc.shift);
    dead[i] = is_dead ? 1u : 0u;
    weights[i] = pc.mode == MCMC_MODE_RELOCATE && is_dead ? 0u : w;
    counts[i] = 0u;
}
