#version 450
// MCMC, sampling by weight (docs/TRAIN.md, "MCMC: sampling"): sample r (the relocation: the rank
// of a dead Gaussian; the adding: the thread) is the Gaussian whose run of the weights' prefix
// sums holds t = (word(seed, r, k) * total) >> 32, found by binary search. Integers throughout,
// so the samples are the reference's exactly; the counts are integer atomics (exact in any order).
#include "common.glsl"
#include "train_types.h"
#include "rng.glsl"

layout(local_size_x = 256) in;

layout(std430, binding = MCMC_SAMPLE_DEAD) readonly buffer Dead { uint dead[]; };               // [N] 0/1
layout(std430, binding = MCMC_SAMPLE_OFF_DEAD) readonly buffer OffDead { uint off_dead[]; };    // [N] exclusive scan
layout(std430, binding = MCMC_SAMPLE_OFF_WEIGHTS) readonly buffer OffW { uint off_w[]; };       // [N] exclusive scan
layout(std430, binding = MCMC_SAMPLE_TOTAL) readonly buffer Total { uint total; };              // sum of the weights
layout(std430, binding = MCMC_SAMPLE_SRC) writeonly buffer Src { uint src[]; };                 // [threads] the samples
layout(std430, binding = MCMC_SAMPLE_COUNTS) buffer Counts { uint counts[]; };                  // [N] samples of each
layout(push_constant) uniform Push { splat_mcmc_push pc; };

void main()
{
    uint t = splat_global_id();
    if (t >= pc.n || total == 0u) return;
    uint r = t;
    if (pc.mode == MCMC_MODE_RELOCATE) {
        if (dead[t] == 0u) return;
        r = off_dead[t];
    }
    uint target, lo_bits;
    umulExtended(rng_word(pc.seed, r, pc.mode == MCMC_MODE_RELOCATE ? SPLAT_MCMC_K_RELOCATE : SPLAT_MCMC_K_ADD), total,
                 target, lo_bits);
    // the last Gaussian whose run starts at or before the target (zero weights have empty runs)
    uint lo = 0u, hi = pc.rows;
    while (hi - lo > 1u) {
        uint mid = lo + (hi - lo) / 2u;
        if (off_w[mid] <= target) lo = mid;
        else hi = mid;
    }
    src[t] = lo;
    atomicAdd(counts[lo], 1u);
}
