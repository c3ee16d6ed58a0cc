/* render: the pipelines of every stage and the buffers a render uses. */
#include <stdio.h>

#include "render/render.h"

/* tile_sort's largest block: 4,096 entries (32 KiB of shared memory), less where the device has
 * less. */
static uint32_t max_tile_cap(const splat_gpu *g)
{
    uint32_t cap = 4096;
    while (cap > 256 && cap * 8 > g->info.max_shared_memory) cap /= 2;
    return cap;
}

/* Its default, 2,048: on the H100 the stage took 0.068 ms at 2,048 against 0.109 at 4,096 on
 * bonsai's test views (docs/PERFORMANCE.md), the few longer runs merging their blocks. */
static uint32_t default_tile_cap(const splat_gpu *g) { return SPLAT_MIN(2048u, max_tile_cap(g)); }

splat_status splat__renderer_init(splat_gpu *g, splat_renderer *r, splat_error *err)
{
    memset(r, 0, sizeof *r);
    r->gpu = g;
    const uint32_t push = sizeof(splat_render_push);
    const uint32_t on = 1;
    /* project_bwd's spec constants (STATS, SH_RECORD) by splat_render_flags (the SPLAT_BWD_ ones) */
    const uint32_t bwd_flags[4][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}};
    r->tile_cap = default_tile_cap(g);
    r->id = splat__unique_id();
    /* tile_sort's spec constants: the block (CAP), whether it gathers each entry's Gaussian */
    const uint32_t tile_spec[2][2] = {{r->tile_cap, 0}, {r->tile_cap, 1}};
    /* rasterize_bwd adds the subgroups' sums in shared memory, SUB Gaussians at a time: as many
     * as fit beside its batch arrays (under 4 KiB), for as many subgroups as the smallest
     * subgroup size allows in a quadrant's workgroup, and no more than 32 (48 and 64 took 27 %
     * longer on the H100 with whole-tile workgroups, docs/PERFORMANCE.md). */
    uint32_t n_sg = SPLAT_QUAD * SPLAT_QUAD / g->info.min_subgroup_size;
    uint32_t budget = g->info.max_shared_memory > 4096 ? g->info.max_shared_memory - 4096 : 0;
    uint32_t sub = budget / (n_sg * 36);
    if (sub > 32) sub = 32;
    sub -= sub % 4; /* it sums four Gaussians at a time */
    if (sub < 4) return splat__fail(err, SPLAT_ERR_LIMIT, "%s: %u bytes of shared memory are too few for rasterize_bwd",
                                    g->info.name, g->info.max_shared_memory);
    const uint32_t bwd_spec[2] = {n_sg, sub};
    struct {
        splat_pipe *pipe;
        splat_pipe_desc desc;
    } pipes[] = {
        {&r->project_fwd, {.shader = "project_fwd", .n_bindings = PROJECT_FWD_BINDINGS}},
        {&r->isect_setup, {.shader = "isect_setup", .n_bindings = ISECT_SETUP_BINDINGS, .push_size = push}},
        {&r->isect_fwd, {.shader = "isect_fwd", .n_bindings = ISECT_FWD_BINDINGS, .push_size = push}},
        {&r->ranges_fwd, {.shader = "ranges_fwd", .n_bindings = RANGES_FWD_BINDINGS}},
        {&r->rasterize_fwd, {.shader = "rasterize_fwd", .n_bindings = RASTERIZE_FWD_BINDINGS}},
        {&r->project_fwd_only, {.shader = "project_fwd", .n_bindings = PROJECT_FWD_BINDINGS, .spec = &on, .n_spec = 1}},
        {&r->project_fwd_h_only, {.shader = "project_fwd_h", .n_bindings = PROJECT_FWD_BINDINGS, .spec = &on, .n_spec = 1}},
        {&r->isect_fwd_only, {.shader = "isect_fwd", .n_bindings = ISECT_FWD_BINDINGS, .push_size = push, .spec = &on, .n_spec = 1}},
        {&r->rasterize_fwd_only, {.shader = "rasterize_fwd", .n_bindings = RASTERIZE_FWD_BINDINGS, .spec = &on, .n_spec = 1}},
        {&r->tile_sort, {.shader = "tile_sort", .n_bindings = TILE_SORT_BINDINGS, .spec = tile_spec[0], .n_spec = 2}},
        {&r->tile_sort_gather, {.shader = "tile_sort", .n_bindings = TILE_SORT_BINDINGS, .spec = tile_spec[1], .n_spec = 2}},
        {&r->rasterize_bwd, {.shader = "rasterize_bwd", .n_bindings = RASTERIZE_BWD_BINDINGS, .spec = bwd_spec, .n_spec = 2}},
        {&r->project_fwd_h, {.shader = "project_fwd_h", .n_bindings = PROJECT_FWD_BINDINGS}},
        {&r->project_bwd_h, {.shader = "project_bwd_h", .n_bindings = PROJECT_BWD_BINDINGS, .push_size = push}},
    };
    splat_status st = splat__sorter_init(g, &r->sorter, NULL, err);
    for (size_t k = 0; k < SPLAT_COUNTOF(pipes) && st == SPLAT_OK; k++)
        st = splat__pipe_init(g, pipes[k].pipe, &pipes[k].desc, err);
    for (uint32_t k = 0; k < SPLAT_COUNTOF(r->project_bwd) && st == SPLAT_OK; k++)
        st = splat__pipe_init(g, &r->project_bwd[k],
                              &(splat_pipe_desc){.shader = "project_bwd", .n_bindings = PROJECT_BWD_BINDINGS,
                                                 .push_size = push, .spec = bwd_flags[k], .n_spec = 2},
                              err);
    if (st != SPLAT_OK) splat__renderer_free(r);
    return st;
}

splat_status splat__renderer_set_tile_cap(splat_renderer *r, uint32_t cap, splat_error *err)
{
    uint32_t most = max_tile_cap(r->gpu);
    if (cap == 0) cap = default_tile_cap(r->gpu);
    if (cap < 2 || cap > most || (cap & (cap - 1)))
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "tile_sort: blocks of %u entries (a power of two, 2 to %u)", cap,
                           most);
    splat_pipe p[2] = {0};
    splat_status st = SPLAT_OK;
    for (uint32_t k = 0; k < 2 && st == SPLAT_OK; k++) {
        const uint32_t spec[2] = {cap, k};
        st = splat__pipe_init(r->gpu, &p[k],
                              &(splat_pipe_desc){.shader = "tile_sort", .n_bindings = TILE_SORT_BINDINGS, .spec = spec, .n_spec = 2},
                              err);
    }
    if (st != SPLAT_OK) {
        for (uint32_t k = 0; k < 2; k++) splat__pipe_free(r->gpu, &p[k]);
        return st;
    }
    splat__pipe_free(r->gpu, &r->tile_sort);
    splat__pipe_free(r->gpu, &r->tile_sort_gather);
    r->tile_sort = p[0];
    r->tile_sort_gather = p[1];
    r->tile_cap = cap;
    r->id = splat__unique_id();
    return SPLAT_OK;
}

void splat__renderer_free(splat_renderer *r)
{
    if (!r->gpu) return;
    splat_gpu *g = r->gpu;
    splat__sorter_free(&r->sorter);
    splat__pipe_free(g, &r->project_fwd);
    splat__pipe_free(g, &r->isect_setup);
    splat__pipe_free(g, &r->isect_fwd);
    splat__pipe_free(g, &r->ranges_fwd);
    splat__pipe_free(g, &r->rasterize_fwd);
    splat__pipe_free(g, &r->project_fwd_only);
    splat__pipe_free(g, &r->project_fwd_h_only);
    splat__pipe_free(g, &r->isect_fwd_only);
    splat__pipe_free(g, &r->rasterize_fwd_only);
    splat__pipe_free(g, &r->tile_sort);
    splat__pipe_free(g, &r->tile_sort_gather);
    splat__pipe_free(g, &r->rasterize_bwd);
    for (uint32_t k = 0; k < SPLAT_COUNTOF(r->project_bwd); k++) splat__pipe_free(g, &r->project_bwd[k]);
    splat__pipe_free(g, &r->project_fwd_h);
    splat__pipe_free(g, &r->project_bwd_h);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------------ buffers */

static uint32_t bits_for(uint32_t n)
{
    uint32_t b = 0;
    while (b < 32 && (1ull << b) < n) b++;
    return b;
}

splat_render_push splat__render_push(const splat_render_bufs *b)
{
    uint32_t tiles = b->max_tiles_x * b->max_tiles_y;
    return (splat_render_push){
        .capacity = b->capacity,
        .isect_capacity = b->isect_capacity,
        .tile_bits = bits_for(tiles + 1),
        .dummy_tile = tiles,
    };
}

static splat_status isect_bufs_init(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t m,
                                    splat_error *err)
{
    uint64_t bytes = (uint64_t)m * 4;
    splat_buf_spec parts[] = {
        {&b->keys_lo, "isect.keys_lo", bytes, SPLAT_MEM_DEVICE},
        {&b->keys_hi, "isect.keys_hi", bytes, SPLAT_MEM_DEVICE},
        {&b->vals, "isect.vals", bytes, SPLAT_MEM_DEVICE},
        {&b->gauss_of_emit, "isect.gauss_of_emit", bytes, SPLAT_MEM_DEVICE},
        {&b->gauss_sorted, "isect.gauss_sorted", b->fwd_only ? 0 : bytes, SPLAT_MEM_DEVICE},
        {&b->partial[0], "isect.partial0", b->fwd_only ? 0 : bytes * 9, SPLAT_MEM_DEVICE},
        {&b->partial[1], "isect.partial1", b->fwd_only ? 0 : bytes * 9, SPLAT_MEM_DEVICE},
        {&b->partial[2], "isect.partial2", b->fwd_only ? 0 : bytes * 9, SPLAT_MEM_DEVICE},
        {&b->partial[3], "isect.partial3", b->fwd_only ? 0 : bytes * 9, SPLAT_MEM_DEVICE},
        {&b->quads, "isect.quads", b->fwd_only ? 0 : bytes, SPLAT_MEM_DEVICE},
        {&b->sort_scratch, "isect.sort_scratch", splat__sort_scratch_bound(&r->sorter, m, 2), SPLAT_MEM_DEVICE},
    };
    splat_status st = splat__bufs_init(g, parts, SPLAT_COUNTOF(parts), err);
    if (st == SPLAT_OK) b->isect_capacity = m;
    return st;
}

/* The buffers sized by the intersection capacity: the one list that freeing and counting use. */
#define ISECT_BUFS(b) {&(b)->keys_lo, &(b)->keys_hi, &(b)->vals, &(b)->gauss_of_emit, &(b)->gauss_sorted,   \
                        &(b)->partial[0], &(b)->partial[1], &(b)->partial[2], &(b)->partial[3], &(b)->quads,     \
                        &(b)->sort_scratch}

static void isect_bufs_free(splat_gpu *g, splat_render_bufs *b)
{
    splat_buf *all[] = ISECT_BUFS(b);
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__buf_free(g, all[k]);
    b->isect_capacity = 0;
}

uint64_t splat__render_bufs_isect_bytes(const splat_render_bufs *b)
{
    const splat_buf *all[] = ISECT_BUFS(b);
    uint64_t bytes = 0;
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) bytes += all[k]->size;
    return bytes;
}

static splat_status bufs_init(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t capacity,
                              uint32_t isect_capacity, uint32_t max_w, uint32_t max_h, bool fwd_only, splat_error *err)
{
    memset(b, 0, sizeof *b);
    b->capacity = capacity;
    b->max_w = max_w;
    b->max_h = max_h;
    b->max_tiles_x = splat__div_up(max_w, SPLAT_TILE);
    b->max_tiles_y = splat__div_up(max_h, SPLAT_TILE);
    b->fwd_only = fwd_only; /* before the intersection buffers: the partial gradients are a stub */
    uint64_t n = capacity, px = (uint64_t)max_w * max_h, tiles = (uint64_t)b->max_tiles_x * b->max_tiles_y;
    uint64_t bwd = fwd_only ? 0 : 1; /* what only the backward reads is a stub (stages still bind it) */
    splat_buf_spec parts[] = {
        {&b->frame, "render.frame", sizeof(splat_frame), SPLAT_MEM_DEVICE},
        {&b->counters, "render.counters", sizeof(splat_counters), SPLAT_MEM_DEVICE},
        {&b->scan_total, "render.scan_total", 4, SPLAT_MEM_DEVICE},
        {&b->sort_count, "render.sort_count", 4, SPLAT_MEM_DEVICE},
        {&b->proj, "render.proj", n * 48, SPLAT_MEM_DEVICE},
        {&b->radii, "render.radii", n * 8, SPLAT_MEM_DEVICE},
        {&b->tiles, "render.tiles", n * 4, SPLAT_MEM_DEVICE},
        {&b->offsets, "render.offsets", n * 4, SPLAT_MEM_DEVICE},
        {&b->scan_scratch, "render.scan_scratch", splat__scan_scratch_bound(&r->sorter, capacity), SPLAT_MEM_DEVICE},
        {&b->ranges, "render.ranges", (tiles + 1) * 8, SPLAT_MEM_DEVICE},
        {&b->out_rgbt, "render.out_rgbt", px * 16, SPLAT_MEM_DEVICE},
        {&b->out_last, "render.out_last", bwd * px * 4, SPLAT_MEM_DEVICE},
        {&b->out_depth, "render.out_depth", bwd * px * 4, SPLAT_MEM_DEVICE},
        {&b->grad_img, "render.grad_img", bwd * px * 16, SPLAT_MEM_DEVICE},
        {&b->stats, "render.stats", bwd * n * 16, SPLAT_MEM_DEVICE},
        {&b->gate, "render.gate", SPLAT_GATE_BYTES, SPLAT_MEM_DEVICE},
        {&b->debug, "render.debug", 128, SPLAT_MEM_DEVICE},
        {&b->readback, "render.readback", sizeof(splat_counters), SPLAT_MEM_READBACK},
        {&b->frame_host, "render.frame_host", sizeof(splat_frame), SPLAT_MEM_UPLOAD},
    };
    splat_status st = splat__bufs_init(g, parts, SPLAT_COUNTOF(parts), err);
    uint64_t most = g->info.max_storage_range / (fwd_only ? 4 : 36);
    if (st == SPLAT_OK) st = isect_bufs_init(g, r, b, (uint32_t)SPLAT_MIN(isect_capacity ? isect_capacity : 1024, most), err);
    if (st != SPLAT_OK) splat__render_bufs_free(g, b);
    return st;
}

splat_status splat__render_bufs_init(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t capacity,
                                     uint32_t isect_capacity, uint32_t max_w, uint32_t max_h, splat_error *err)
{
    return bufs_init(g, r, b, capacity, isect_capacity, max_w, max_h, false, err);
}

splat_status splat__render_bufs_init_fwd_only(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b,
                                              uint32_t capacity, uint32_t isect_capacity, uint32_t max_w, uint32_t max_h,
                                              splat_error *err)
{
    return bufs_init(g, r, b, capacity, isect_capacity, max_w, max_h, true, err);
}

void splat__render_bufs_clear(splat_cmd *c, const splat_render_bufs *b)
{
    splat__cmd_fill(c, SPLAT_VIEW(b->gate), 0);
    splat__cmd_fill(c, SPLAT_VIEW_AT(b->debug, 0, 4), 0);
}

void splat__render_bufs_free(splat_gpu *g, splat_render_bufs *b)
{
    isect_bufs_free(g, b);
    splat_buf *all[] = {&b->frame, &b->counters, &b->scan_total, &b->sort_count, &b->proj, &b->radii, &b->tiles, &b->offsets, &b->scan_scratch,
                        &b->ranges, &b->out_rgbt, &b->out_last, &b->out_depth, &b->grad_img, &b->stats,
                        &b->gate, &b->debug, &b->readback, &b->frame_host};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__buf_free(g, all[k]);
    splat__rec_free(g, &b->image_rec);
    memset(b, 0, sizeof *b);
}

splat_status splat__render_bufs_grow_isect(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t needed,
                                           splat_error *err)
{
    /* The per-intersection partial gradients (9 floats) are the largest array bound at once;
     * forward-only renders have none, and bind arrays of one word per intersection. */
    uint64_t most = g->info.max_storage_range / (b->fwd_only ? 4 : 36);
    if (needed > most)
        return splat__fail(err, SPLAT_ERR_LIMIT,
                           "render: %u tile intersections needed, %s binds at most %llu (maxStorageBufferRange); use a "
                           "smaller image, or fewer or smaller Gaussians",
                           needed, g->info.name, (unsigned long long)most);
    uint64_t want = (uint64_t)needed + needed / 2 + 1024;
    if (want > most) want = most;
    if (want <= b->isect_capacity) return SPLAT_OK;
    isect_bufs_free(g, b);
    return isect_bufs_init(g, r, b, (uint32_t)want, err);
}
