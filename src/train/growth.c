/* train: how far the model can grow in the device's free memory (splat__strategy_memory_fit,
 * strategy.h; docs/TRAIN.md, "When the GPU is full"). */
#include "render/render.h"
#include "train/strategy.h"

typedef struct grow_cost {
    uint64_t avail, grads, grad_row, rb_old, rb_cap, rb_row, count;
    uint64_t isect, isect_cap, isect_seen; /* the intersections' bytes, their capacity, the most a step needed */
    uint64_t old[2 * SPLAT_GROUP_COUNT], row[2 * SPLAT_GROUP_COUNT]; /* per pass */
    size_t n;
} grow_cost;

/* The most memory in use beyond today's while the model grows to n Gaussians, and after. */
static uint64_t grow_need(const grow_cost *c, uint64_t n)
{
    int64_t run = -(int64_t)c->grads, peak = 0;
    for (size_t k = 0; k < c->n; k++) {
        int64_t fresh = (int64_t)(c->row[k] * n);
        peak = SPLAT_MAX(peak, run + fresh);
        run += fresh - (int64_t)c->old[k];
    }
    int64_t after = run + (int64_t)((n + n / 4) * c->grad_row); /* the gradients again */
    if (n > c->rb_cap) after += (int64_t)((n + n / 4) * c->rb_row) - (int64_t)c->rb_old;
    peak = SPLAT_MAX(peak, after);
    /* the intersections grow with the count; buffers too small for a step are replaced by ones for
     * 1.5 times what it needed (splat__render_bufs_grow_isect) */
    uint64_t pairs = c->count ? c->isect_seen * n / c->count : 0;
    if (pairs > c->isect_cap && c->isect_cap)
        peak += SPLAT_MAX(0, (int64_t)((pairs + pairs / 2 + 1024) * c->isect / c->isect_cap) - (int64_t)c->isect);
    return peak > 0 ? (uint64_t)peak : 0;
}

uint32_t splat__strategy_memory_fit(const splat_strategy_ctx *ctx, const uint32_t *passes, size_t n_passes,
                                    uint32_t count)
{
    uint64_t total, avail = splat__gpu_mem_available(ctx->gpu, &total);
    if (avail == UINT64_MAX) return UINT32_MAX;
    const splat_model *m = ctx->model;
    static const splat_render_bufs none;
    const splat_render_bufs *rb = ctx->rb ? ctx->rb : &none;
    grow_cost c = {.avail = avail > total / 32 ? avail - total / 32 : 0, .count = count, .n = SPLAT_MIN(n_passes, 2 * (size_t)SPLAT_GROUP_COUNT),
                   .rb_cap = rb->capacity};
    uint64_t grad_row = 0;
    for (uint32_t gi = 0; gi < SPLAT_GROUP_COUNT; gi++) {
        c.grads += m->grads.group[gi].size;
        grad_row += 4ull * splat__grad_width(gi);
    }
    for (size_t k = 0; k < c.n; k++)
        for (uint32_t gi = 0; gi < SPLAT_GROUP_COUNT; gi++) {
            uint64_t w = 4ull * splat__groups[gi].width;
            if (passes[k] & (1u << gi)) c.old[k] += m->params.group[gi].size, c.row[k] += w;
            if (passes[k] & (1u << (SPLAT_APPLY_MOMENTS + gi))) c.old[k] += m->moments.group[gi].size, c.row[k] += splat__scene_gpu_row_bytes(&m->moments, gi);
        }
    c.grad_row = grad_row;
    const splat_buf *per[] = {&rb->proj, &rb->radii, &rb->tiles, &rb->offsets, &rb->stats, &rb->scan_scratch};
    for (size_t k = 0; k < SPLAT_COUNTOF(per); k++) c.rb_old += per[k]->size;
    c.rb_row = rb->capacity ? (c.rb_old + rb->capacity - 1) / rb->capacity : 0;
    c.isect = splat__render_bufs_isect_bytes(rb);
    c.isect_cap = rb->isect_capacity, c.isect_seen = ctx->isect_seen;
    /* the need grows with the count: the largest that fits, by bisection */
    if (grow_need(&c, 0) > c.avail) return 0;
    uint64_t lo = 0, hi = UINT32_MAX / 4;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo + 1) / 2;
        if (grow_need(&c, mid) <= c.avail) lo = mid;
        else hi = mid - 1;
    }
    return (uint32_t)lo;
}
