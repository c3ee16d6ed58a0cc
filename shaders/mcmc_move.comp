#version 450
// MCMC, the rows the samples make: the relocation copies every parameter of its sample into each
// dead row (rank order; its Adam moments stay, as gsplat leaves them); the adding copies sample t
// into row rows + t with zero moments. Sources are live rows below `rows`, destinations dead or
// new ones, so no row is read and written by two threads.
#include "common.glsl"
#include "train_types.h"

layout(local_size_x = 128) in;

layout(std430, binding = MCMC_MOVE_DEAD) readonly buffer Dead { uint dead[]; };     // [N] 0/1
layout(std430, binding = MCMC_MOVE_SRC) readonly buffer Src { uint src[]; };        // [threads] the samples
layout(std430, binding = MCMC_MOVE_TOTAL) readonly buffer Total { uint total; };    // the relocation's sum of weights
// Per group of core/params.h: the parameters [rows,width] and moments [rows,width
// SPLAT_MOMENT_WORDS(flags)], in place.
#define DECLARE(G, name, NAME, width, head, LRH, LRR, flags)                                           \
    layout(std430, binding = MCMC_MOVE_PARAMS + G) buffer P_##name { float p_##name[]; };            \
    layout(std430, binding = MCMC_MOVE_MOMENTS + G) writeonly buffer M_##name { uint m_##name[]; };
SPLAT_PARAM_GROUPS(DECLARE)
layout(push_constant) uniform Push { splat_mcmc_push pc; };

#define COPY(G, name, NAME, width, head, LRH, LRR, flags) \
    for (uint k = 0u; k < uint(width); k++) p_##name[uint(width) * dst + k] = p_##name[uint(width) * s + k];
#define ZERO(G, name, NAME, width, head, LRH, LRR, flags) \
    for (uint k = 0u; k < SPLAT_MOMENT_WORDS(flags) * uint(width); k++) m_##name[SPLAT_MOMENT_WORDS(flags) * uint(width) * dst + k] = 0u;

void main()
{
    uint t = splat_global_id();
    if (t >= pc.n) return;
    if (pc.mode == MCMC_MODE_RELOCATE) {
        if (total == 0u || dead[t] == 0u) return;
        uint s = src[t], dst = t;
        SPLAT_PARAM_GROUPS(COPY)
    } else {
        uint s = src[t], dst = pc.rows + t;
        SPLAT_PARAM_GROUPS(COPY)
        SPLAT_PARAM_GROUPS(ZERO)
    }
}
