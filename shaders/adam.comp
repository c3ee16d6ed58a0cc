#version 450
// Adam over every parameter group in one dispatch (docs/TRAIN.md), one thread per parameter
// element, and per 16-byte quad of the SH rows (81 % of the bytes, moved with a quarter of the
// loads), so that neighbouring threads touch neighbouring memory: the groups of core/params.h
// are laid end to end (means 3N, log-scales 3N, quaternions 4N, opacities N, SH 12N quads) and
// each thread finds its group by range. Moments are a word per element, [N][width] like the
// parameters (train_types.h, SPLAT_MOMENT_WORDS): the step runs in float on the unpacked m and v,
// which are then stored rounded stochastically to 16 bits each (moments.glsl); a group flagged
// SPLAT_GROUP_FLAG_FLOAT_MOMENTS (the means and the opacities) keeps them as floats.
// SH coefficients above the active degree have zero gradients and zero moments, so skipping
// them changes nothing. Selective (gsplat's visible_adam): a Gaussian the step culled keeps its
// parameters and its moments. With SH_RECORD (training's pipeline) the SH gradients come as
// project_bwd's records (render_types.h): the gradient of coefficient k, channel c is
// Y[k] * d_raw[c], the product project_bwd would have stored (a zero where it stored a zero).
// A parameter it writes NaN or Inf sets the gate buffer's second word (SPLAT_GATE_BYTES), which
// the next step reports: training's forward reads the SH of the Gaussians it draws only, so this
// is where a culled Gaussian's bad coefficient shows.
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "train_types.h"
#include "rng.glsl"
#include "moments.glsl"

layout(local_size_x = 256) in;
// A specialization, not a push flag: behind a flag Adam took 0.571 ms at bonsai 30k on the
// H100, as a specialization 0.507, against 0.525 with the rows (docs/PERFORMANCE.md).
layout(constant_id = 0) const uint SH_RECORD = 0u;

layout(std430, binding = ADAM_SLOTS) readonly buffer Slots { splat_train_slot slots[]; };
layout(std430, binding = ADAM_GATE) buffer Gate { uint gate; uint params_bad; };  // SPLAT_GATE_BYTES
// Per group: parameters [N,width], gradients [N,width], moments [N,width] words or [N,2,width]
// float m and v (train_types.h; the SH group's words by quads, below).
#define DECLARE(i, name, NAME, width, head, LRH, LRR, flags)                                \
    layout(std430, binding = ADAM_PARAMS + i) buffer P_##name { float p_##name[]; };               \
    layout(std430, binding = ADAM_GRADS + i) readonly buffer G_##name { float g_##name[]; };       \
    layout(std430, binding = ADAM_MOMENTS + i) buffer M_##name { uint m_##name[]; };
SPLAT_PARAM_GROUPS(DECLARE)
// The SH group again, by quads (sh_quad).
const uint SH_QUADS = 12u; // a row's 48 floats
layout(std430, binding = ADAM_PARAMS + SPLAT_GROUP_SH) buffer P_sh4 { vec4 p_sh4[]; };
layout(std430, binding = ADAM_GRADS + SPLAT_GROUP_SH) readonly buffer G_sh4 { vec4 g_sh4[]; };
layout(std430, binding = ADAM_MOMENTS + SPLAT_GROUP_SH) buffer M_sh4 { uvec4 m_sh4[]; };
// Element k of row gi's SH gradient (coefficient k / 3, channel k % 3) from its record: the one
// product, rounded once.
float sh_record_grad(uint gi, uint k)
{
    uint b = gi * SPLAT_SH_RECORD_FLOATS, coeff = k / 3u;
    return g_sh[b + coeff] * g_sh[b + SPLAT_SH_RECORD_D_RAW + (k - 3u * coeff)];
}
layout(std430, binding = ADAM_VISIBLE) readonly buffer Radii { vec2 radii[]; };  // [N] 0: culled this step
layout(push_constant) uniform Push { splat_train_push pc; };

// pcg_hash(step): the first link of every rounding word's rng_word(step, i, k)
uint h_step;

const float B1 = float(SPLAT_ADAM_B1), B2 = float(SPLAT_ADAM_B2), EPS = float(SPLAT_ADAM_EPS);

// torch.optim.Adam: p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
float step_one(float p, float g, inout float m, inout float v, float step_size, float bias2)
{
    m = B1 * m + (1.0 - B1) * g;
    v = B2 * v + (1.0 - B2) * g * g;
    return p - step_size * m / (sqrt(v) / bias2 + EPS);
}

// Element e of group i: its row gi and column k, the moments' index, the learning rate of the
// column (head or rest). The SH group is not stepped here but by sh_quad, below.
#define UPDATE(i, name, NAME, width, head, LRH, LRR, flags)                                \
    if ((flags & SPLAT_GROUP_FLAG_SH) == 0u) {                                                     \
        if (e < uint(width) * n) {                                                                 \
            uint gi = e / uint(width), k = e - gi * uint(width);                                   \
            if (selective && radii[gi].x == 0.0) return;                                           \
            float lr = (head == width || k < uint(head)) ? slots[pc.slot].lr_head[i] : slots[pc.slot].lr_rest[i]; \
            bool fm = (flags & SPLAT_GROUP_FLAG_FLOAT_MOMENTS) != 0u;                              \
            uint mi = 2u * gi * uint(width) + k; /* float moments: row gi's m, then its v */       \
            float m = fm ? uintBitsToFloat(m_##name[mi]) : moment_m(m_##name[e]);                  \
            float v = fm ? uintBitsToFloat(m_##name[mi + uint(width)]) : moment_v(m_##name[e]);    \
            float np = step_one(p_##name[e], g_##name[e], m, v, lr / bias1, bias2);                \
            if (isnan(np) || isinf(np)) atomicOr(params_bad, 1u);                                  \
            p_##name[e] = np;                                                                      \
            if (fm) {                                                                              \
                m_##name[mi] = floatBitsToUint(m);                                                 \
                m_##name[mi + uint(width)] = floatBitsToUint(v);                                   \
            } else {                                                                               \
                m_##name[e] = moment_pack(m, v, pcg_hash(pcg_hash(h_step ^ e) ^ (SPLAT_MOMENT_RNG_K + 4u * i))); \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        e -= uint(width) * n;                                                                      \
    }

// The SH rows by quads: thread e steps elements 4q..4q+3 of row gi (q = e % 12) with 16-byte
// loads and stores of the row, its moments and (without records) its gradients. Each element's
// arithmetic is the one above; coefficients above the active degree are stored back as loaded.
void sh_quad(uint e, uint n, uint n_active, float bias1, float bias2, bool selective)
{
    uint gi = e / SH_QUADS, q = e - gi * SH_QUADS, k0 = 4u * q;
    if (gi >= n || k0 / 3u >= n_active) return;
    if (selective && radii[gi].x == 0.0) return;
    vec4 p = p_sh4[e];
    uvec4 mw = m_sh4[e];
    vec4 g = SH_RECORD != 0u ? vec4(0.0) : g_sh4[e];
    uint h_quad = pcg_hash(h_step ^ e);
    [[unroll]] for (uint j = 0u; j < 4u; j++) {
        uint k = k0 + j;
        if (k / 3u >= n_active) continue;
        float lr = k < 3u ? slots[pc.slot].lr_head[SPLAT_GROUP_SH] : slots[pc.slot].lr_rest[SPLAT_GROUP_SH];
        float gk = SH_RECORD != 0u ? sh_record_grad(gi, k) : g[j];
        float mj = moment_m(mw[j]), vj = moment_v(mw[j]);
        p[j] = step_one(p[j], gk, mj, vj, lr / bias1, bias2);
        mw[j] = moment_pack(mj, vj, pcg_hash(h_quad ^ (SPLAT_MOMENT_RNG_K + 4u * SPLAT_GROUP_SH + j)));
        if (isnan(p[j]) || isinf(p[j])) atomicOr(params_bad, 1u);
    }
    p_sh4[e] = p;
    m_sh4[e] = mw;
}

void main()
{
    uint e = splat_global_id();
    uint n = slots[pc.slot].frame.n_gaussians, degree = slots[pc.slot].frame.sh_degree;
    uint n_active = (degree + 1u) * (degree + 1u);
    float bias1 = slots[pc.slot].bias1, bias2 = slots[pc.slot].bias2;
    bool selective = (pc.flags & SPLAT_ADAM_SELECTIVE) != 0u;
    if (gate != 0u) return;
    h_step = pcg_hash(slots[pc.slot].step);
    SPLAT_PARAM_GROUPS(UPDATE)
    sh_quad(e, n, n_active, bias1, bias2, selective);
}
