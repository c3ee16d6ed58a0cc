#version 450
// The tile-first order: the intersections were emitted in Gaussian order and sorted by tile
// alone, carrying their depth bits; one workgroup per tile now sorts its run [ranges[t].x,
// ranges[t].y) by (depth bits, value). The value is the emission index (training) or the Gaussian
// (forward-only renders); both rise with the Gaussian, which is the order a stable sort by the
// full (tile, depth) key leaves ties in, so this is exactly that sort's order.
//
// A bitonic network with every comparator ascending (the first step of each merge compares
// mirrored positions), so the virtual +inf past the run's end never moves and comparators
// reaching it are skipped. Blocks of CAP entries are sorted in shared memory; a longer run
// (rare: a few tiles of a frame) merges its blocks with the steps of stride CAP or more in
// memory and each level's shorter strides again block by block in shared memory.
//
// GATHER (training): then each entry's Gaussian, gauss_of_emit[value], is written beside it, so
// that both rasterize stages read it in place rather than through the emission index, once each
// per entry (forward-only renders sort the Gaussians themselves).
#extension GL_EXT_control_flow_attributes : require
#include "common.glsl"
#include "render_types.h"

layout(local_size_x = 256) in;

layout(std430, binding = TILE_SORT_FRAME) readonly buffer FrameBuf { splat_frame frame; };
layout(std430, binding = TILE_SORT_RANGES) readonly buffer Ranges { uvec2 ranges[]; };  // [tiles]
layout(std430, binding = TILE_SORT_KEYS) coherent buffer Keys { uint keys[]; };         // [M] depth bits
layout(std430, binding = TILE_SORT_VALS) coherent buffer Vals { uint vals[]; };         // [M] emission indices (fwd-only: Gaussians)
layout(std430, binding = TILE_SORT_GAUSS_OF_EMIT) readonly buffer GaussOf { uint gauss_of_emit[]; };  // [M] (GATHER)
layout(std430, binding = TILE_SORT_GAUSS) writeonly buffer Gauss { uint gauss_sorted[]; };           // [M] (GATHER)

const uint WG = 256u;
// Entries sorted in shared memory at a time: a power of two, set by splat__renderer_set_tile_cap
// (2,048 by default: 16 KiB), smaller where the device's shared memory is, or where a test wants
// the merge path on short runs.
layout(constant_id = 0) const uint CAP = 2048u;
layout(constant_id = 1) const uint GATHER = 0u;
shared uint s_key[CAP];
shared uint s_val[CAP];

// Entries a thread moves between memory and shared memory at a time: every load of a round is
// issued before any store waits on one (one trip to memory where a loop of single moves made 8).
const uint MOVE = 8u;

bool later(uint ka, uint va, uint kb, uint vb) { return ka > kb || (ka == kb && va > vb); }

// Comparator q of a step: the pair (lo, hi) for stride d at merge level k (mirrored when d is
// k's first step). d and k are powers of two, so bit operations (no divisions: with them the
// index arithmetic was most of a comparator's instructions): lo is q with a zero bit inserted
// at d, and hi sets that bit or mirrors lo's offset in its k-block.
uvec2 pair_of(uint q, uint d, uint k)
{
    uint lo = q + (q & ~(d - 1u));
    uint hi = d == k >> 1u ? lo ^ (k - 1u) : lo | d;
    return uvec2(lo, hi);
}

// The block of `span` entries at `base` of the run at r0 (n entries in all) in shared memory:
// `whole` sorts it (levels 2..span); otherwise the strides span/2..1 of merge level k.
void block_pass(uint r0, uint n, uint base, uint span, bool whole, uint k)
{
    uint tid = gl_LocalInvocationIndex;
    uint m = min(span, n - base);
    for (uint p0 = tid; p0 < m; p0 += MOVE * WG) {
        uint k[MOVE], v[MOVE];
        [[unroll]] for (uint u = 0u; u < MOVE; u++) {
            uint p = min(p0 + u * WG, m - 1u);
            k[u] = keys[r0 + base + p];
            v[u] = vals[r0 + base + p];
        }
        [[unroll]] for (uint u = 0u; u < MOVE; u++)
            if (p0 + u * WG < m) s_key[p0 + u * WG] = k[u], s_val[p0 + u * WG] = v[u];
    }
    barrier();
    for (uint kk = whole ? 2u : k; kk <= (whole ? span : k); kk <<= 1u) {
        for (uint d = min(kk, span) >> 1u; d > 0u; d >>= 1u) {
            for (uint q = tid; q < span / 2u; q += WG) {
                uvec2 c = pair_of(q, d, kk);
                if (c.y >= m) continue;
                uint ka = s_key[c.x], kb = s_key[c.y], va = s_val[c.x], vb = s_val[c.y];
                if (later(ka, va, kb, vb)) s_key[c.x] = kb, s_key[c.y] = ka, s_val[c.x] = vb, s_val[c.y] = va;
            }
            barrier();
        }
    }
    // the keys too, though only the merge reads them again: sorted keys that tests can check
    // against the depths (tile_sort stayed at 0.084 ms on bonsai's test views, H100)
    for (uint p = tid; p < m; p += WG) vals[r0 + base + p] = s_val[p], keys[r0 + base + p] = s_key[p];
    memoryBarrierBuffer();
    barrier();
}

void main()
{
    uint tx = gl_WorkGroupID.x, ty = gl_WorkGroupID.y;
    if (tx >= frame.tiles_x || ty >= frame.tiles_y) return;
    uvec2 r = ranges[ty * frame.tiles_x + tx];
    uint n = r.y - r.x;
    if (n < 2u) {
        if (GATHER != 0u && n == 1u && gl_LocalInvocationIndex == 0u) gauss_sorted[r.x] = gauss_of_emit[vals[r.x]];
        return;
    }
    uint P = 2u;
    while (P < n) P <<= 1u;
    uint span = min(P, CAP), blocks = (n + CAP - 1u) / CAP;
    for (uint b = 0u; b < blocks; b++) block_pass(r.x, n, b * CAP, span, true, 0u);
    uint tid = gl_LocalInvocationIndex;
    for (uint k = 2u * CAP; k <= P; k <<= 1u) {
        for (uint d = k >> 1u; d >= CAP; d >>= 1u) {
            for (uint q = tid; q < P / 2u; q += WG) {
                uvec2 c = pair_of(q, d, k) + r.x;
                if (c.y >= r.y) continue;
                uint ka = keys[c.x], kb = keys[c.y], va = vals[c.x], vb = vals[c.y];
                if (later(ka, va, kb, vb)) keys[c.x] = kb, keys[c.y] = ka, vals[c.x] = vb, vals[c.y] = va;
            }
            memoryBarrierBuffer();
            barrier();
        }
        for (uint b = 0u; b < blocks; b++) block_pass(r.x, n, b * CAP, span, false, k);
    }
    // (block_pass ends with the barrier that makes its writes of vals visible here; a run of one
    // block still has them in shared memory, where they are read from)
    if (GATHER != 0u)
        for (uint p0 = tid; p0 < n; p0 += MOVE * WG) {
            uint g[MOVE];
            [[unroll]] for (uint u = 0u; u < MOVE; u++) {
                uint p = min(p0 + u * WG, n - 1u);
                g[u] = gauss_of_emit[P <= CAP ? s_val[p] : vals[r.x + p]];
            }
            [[unroll]] for (uint u = 0u; u < MOVE; u++)
                if (p0 + u * WG < n) gauss_sorted[r.x + p0 + u * WG] = g[u];
        }
}
