#include <stdio.h>

#include "render/render.h"

/* ------------------------------------------------------------------ scenes */

splat_status splat__scene_gpu_init(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t capacity,
                                   splat_error *err)
{
    return splat__scene_gpu_init_sh(g, s, name, capacity, false, err);
}

splat_status splat__scene_gpu_init_sh(splat_gpu *g, splat_scene_gpu *s, const char *name, uint32_t capacity, bool sh_half,
                                      splat_error *err)
{
    memset(s, 0, sizeof *s);
    s->capacity = capacity;
    s->sh_half = sh_half;
    uint64_t n = capacity;
    char label[40];
    struct {
        splat_buf *buf;
        const char *what;
        uint64_t bytes;
    } parts[] = {
        {&s->means, "means", n * 12},
        {&s->log_scales, "log_scales", n * 12},
        {&s->quats, "quats", n * 16},
        {&s->opacities, "opacities", n * 4},
        {&s->sh, "sh", n * SPLAT_SH_COEFFS * (sh_half ? 6 : 12)},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(parts); k++) {
        snprintf(label, sizeof label, "%s.%s", name, parts[k].what);
        splat_status st = splat__buf_init(g, parts[k].buf, label, parts[k].bytes, SPLAT_MEM_DEVICE, err);
        if (st != SPLAT_OK) {
            splat__scene_gpu_free(g, s);
            return st;
        }
    }
    return SPLAT_OK;
}

void splat__scene_gpu_free(splat_gpu *g, splat_scene_gpu *s)
{
    splat__buf_free(g, &s->means);
    splat__buf_free(g, &s->log_scales);
    splat__buf_free(g, &s->quats);
    splat__buf_free(g, &s->opacities);
    splat__buf_free(g, &s->sh);
    memset(s, 0, sizeof *s);
}

splat_status splat__scene_gpu_upload(splat_gpu *g, splat_scene_gpu *dst, const splat_scene *src, splat_error *err)
{
    if (src->count > dst->capacity)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "scene of %u Gaussians does not fit a GPU scene of %u", src->count,
                           dst->capacity);
    uint64_t n = src->count;
    splat_status st = splat__buf_upload(g, &dst->means, 0, src->means, n * 12, err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &dst->log_scales, 0, src->log_scales, n * 12, err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &dst->quats, 0, src->quats, n * 16, err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &dst->opacities, 0, src->opacities, n * 4, err);
    if (st == SPLAT_OK && !dst->sh_half) st = splat__buf_upload(g, &dst->sh, 0, src->sh, n * SPLAT_SH_COEFFS * 12, err);
    if (st == SPLAT_OK && dst->sh_half) {
        uint16_t *h = splat__malloc(n * SPLAT_SH_COEFFS * 6 + 2);
        if (!h) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "scene upload: out of host memory");
        for (uint64_t k = 0; k < n * SPLAT_SH_COEFFS * 3; k++) h[k] = splat__f32_to_f16(src->sh[k]);
        st = splat__buf_upload(g, &dst->sh, 0, h, n * SPLAT_SH_COEFFS * 6, err);
        splat__free(h);
    }
    if (st == SPLAT_OK) dst->count = src->count;
    return st;
}

splat_status splat__scene_gpu_download(splat_gpu *g, const splat_scene_gpu *src, splat_scene *dst, splat_error *err)
{
    splat_status st = splat__scene_reserve(dst, src->count, err);
    if (st != SPLAT_OK) return st;
    uint64_t n = src->count;
    st = splat__buf_download(g, &src->means, 0, dst->means, n * 12, err);
    if (st == SPLAT_OK) st = splat__buf_download(g, &src->log_scales, 0, dst->log_scales, n * 12, err);
    if (st == SPLAT_OK) st = splat__buf_download(g, &src->quats, 0, dst->quats, n * 16, err);
    if (st == SPLAT_OK) st = splat__buf_download(g, &src->opacities, 0, dst->opacities, n * 4, err);
    if (st == SPLAT_OK && !src->sh_half) st = splat__buf_download(g, &src->sh, 0, dst->sh, n * SPLAT_SH_COEFFS * 12, err);
    if (st == SPLAT_OK && src->sh_half) {
        uint16_t *h = splat__malloc(n * SPLAT_SH_COEFFS * 6 + 2);
        if (!h) return splat__fail(err, SPLAT_ERR_OUT_OF_HOST_MEMORY, "scene download: out of host memory");
        st = splat__buf_download(g, &src->sh, 0, h, n * SPLAT_SH_COEFFS * 6, err);
        for (uint64_t k = 0; st == SPLAT_OK && k < n * SPLAT_SH_COEFFS * 3; k++) dst->sh[k] = splat__f16_to_f32(h[k]);
        splat__free(h);
    }
    if (st == SPLAT_OK) dst->count = src->count;
    return st;
}

/* --------------------------------------------------------------- pipelines */

splat_status splat__renderer_init(splat_gpu *g, splat_renderer *r, splat_error *err)
{
    memset(r, 0, sizeof *r);
    r->gpu = g;
    const uint32_t push = sizeof(splat_render_push);
    const uint32_t stats_on = 1;
    /* rasterize_bwd adds the subgroups' sums in shared memory, SUB Gaussians at a time: as many
     * as fit beside its batch arrays (about 14 KiB), for as many subgroups as the smallest
     * subgroup size allows. */
    uint32_t n_sg = 256 / g->info.min_subgroup_size;
    uint32_t budget = g->info.max_shared_memory > 14336 ? g->info.max_shared_memory - 14336 : 0;
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
        {&r->project_fwd, {.shader = "project_fwd", .n_bindings = 10}},
        {&r->isect_setup, {.shader = "isect_setup", .n_bindings = 3, .push_size = push}},
        {&r->isect_fwd, {.shader = "isect_fwd", .n_bindings = 11, .push_size = push}},
        {&r->ranges_fwd, {.shader = "ranges_fwd", .n_bindings = 3}},
        {&r->rasterize_fwd, {.shader = "rasterize_fwd", .n_bindings = 8}},
        {&r->rasterize_bwd, {.shader = "rasterize_bwd", .n_bindings = 9, .spec = bwd_spec, .n_spec = 2}},
        {&r->project_bwd, {.shader = "project_bwd", .n_bindings = 19, .push_size = push}},
        {&r->project_bwd_stats, {.shader = "project_bwd", .n_bindings = 19, .push_size = push, .spec = &stats_on, .n_spec = 1}},
        {&r->project_fwd_h, {.shader = "project_fwd_h", .n_bindings = 10}},
        {&r->project_bwd_h, {.shader = "project_bwd_h", .n_bindings = 19, .push_size = push}},
    };
    splat_status st = splat__sorter_init(g, &r->sorter, NULL, err);
    for (size_t k = 0; k < SPLAT_COUNTOF(pipes) && st == SPLAT_OK; k++)
        st = splat__pipe_init(g, pipes[k].pipe, &pipes[k].desc, err);
    if (st != SPLAT_OK) splat__renderer_free(r);
    return st;
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
    splat__pipe_free(g, &r->rasterize_bwd);
    splat__pipe_free(g, &r->project_bwd);
    splat__pipe_free(g, &r->project_bwd_stats);
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

static splat_status isect_bufs_init(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t m,
                                    splat_error *err)
{
    uint64_t bytes = (uint64_t)m * 4;
    splat_status st = SPLAT_OK;
    struct {
        splat_buf *buf;
        const char *name;
        uint64_t size;
    } parts[] = {
        {&b->keys_lo, "isect.keys_lo", bytes},
        {&b->keys_hi, "isect.keys_hi", bytes},
        {&b->vals, "isect.vals", bytes},
        {&b->gauss_of_emit, "isect.gauss_of_emit", bytes},
        {&b->partial, "isect.partial", bytes * 9},
        {&b->sort_scratch, "isect.sort_scratch", splat__sort_scratch_bound(&r->sorter, m, 2)},
    };
    for (size_t k = 0; k < SPLAT_COUNTOF(parts) && st == SPLAT_OK; k++)
        st = splat__buf_init(g, parts[k].buf, parts[k].name, parts[k].size, SPLAT_MEM_DEVICE, err);
    if (st == SPLAT_OK) b->isect_capacity = m;
    return st;
}

static void isect_bufs_free(splat_gpu *g, splat_render_bufs *b)
{
    splat__buf_free(g, &b->keys_lo);
    splat__buf_free(g, &b->keys_hi);
    splat__buf_free(g, &b->vals);
    splat__buf_free(g, &b->gauss_of_emit);
    splat__buf_free(g, &b->partial);
    splat__buf_free(g, &b->sort_scratch);
    b->isect_capacity = 0;
}

splat_status splat__render_bufs_init(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t capacity,
                                     uint32_t isect_capacity, uint32_t max_w, uint32_t max_h, splat_error *err)
{
    memset(b, 0, sizeof *b);
    b->capacity = capacity;
    b->max_w = max_w;
    b->max_h = max_h;
    b->max_tiles_x = splat__div_up(max_w, SPLAT_TILE);
    b->max_tiles_y = splat__div_up(max_h, SPLAT_TILE);
    uint64_t n = capacity, px = (uint64_t)max_w * max_h, tiles = (uint64_t)b->max_tiles_x * b->max_tiles_y;
    struct {
        splat_buf *buf;
        const char *name;
        uint64_t size;
        splat_mem kind;
    } parts[] = {
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
        {&b->out_last, "render.out_last", px * 4, SPLAT_MEM_DEVICE},
        {&b->out_depth, "render.out_depth", px * 4, SPLAT_MEM_DEVICE},
        {&b->grad_img, "render.grad_img", px * 16, SPLAT_MEM_DEVICE},
        {&b->stats, "render.stats", n * 16, SPLAT_MEM_DEVICE},
        {&b->gate, "render.gate", 4, SPLAT_MEM_DEVICE},
        {&b->debug, "render.debug", 128, SPLAT_MEM_DEVICE},
        {&b->readback, "render.readback", sizeof(splat_counters), SPLAT_MEM_READBACK},
    };
    splat_status st = SPLAT_OK;
    for (size_t k = 0; k < SPLAT_COUNTOF(parts) && st == SPLAT_OK; k++)
        st = splat__buf_init(g, parts[k].buf, parts[k].name, parts[k].size, parts[k].kind, err);
    uint64_t most = g->info.max_storage_range / 36;
    if (st == SPLAT_OK) st = isect_bufs_init(g, r, b, (uint32_t)SPLAT_MIN(isect_capacity ? isect_capacity : 1024, most), err);
    const uint32_t zero = 0;
    if (st == SPLAT_OK) st = splat__buf_upload(g, &b->gate, 0, &zero, 4, err);
    if (st == SPLAT_OK) st = splat__buf_upload(g, &b->debug, 0, &zero, 4, err);
    if (st != SPLAT_OK) splat__render_bufs_free(g, b);
    return st;
}

void splat__render_bufs_free(splat_gpu *g, splat_render_bufs *b)
{
    isect_bufs_free(g, b);
    splat_buf *all[] = {&b->frame, &b->counters, &b->scan_total, &b->sort_count, &b->proj, &b->radii, &b->tiles, &b->offsets, &b->scan_scratch,
                        &b->ranges, &b->out_rgbt, &b->out_last, &b->out_depth, &b->grad_img, &b->stats,
                        &b->gate, &b->debug, &b->readback};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__buf_free(g, all[k]);
    memset(b, 0, sizeof *b);
}

splat_status splat__render_bufs_grow_isect(splat_gpu *g, const splat_renderer *r, splat_render_bufs *b, uint32_t needed,
                                           splat_error *err)
{
    /* The per-intersection partial gradients (9 floats) are the largest array bound at once. */
    uint64_t most = g->info.max_storage_range / 36;
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

/* -------------------------------------------------------------------- frame */

void splat__frame_make(splat_frame *f, const splat_camera *cam, const splat_render_opts *opts, uint32_t n_gaussians)
{
    memset(f, 0, sizeof *f);
    f->cam.fx = cam->fx;
    f->cam.fy = cam->fy;
    f->cam.cx = cam->cx;
    f->cam.cy = cam->cy;
    memcpy(f->cam.R, cam->R, sizeof f->cam.R);
    memcpy(f->cam.t, cam->t, sizeof f->cam.t);
    f->cam.width = cam->width;
    f->cam.height = cam->height;
    for (int i = 0; i < 3; i++) {
        /* campos = -R^T t */
        double c = 0;
        for (int k = 0; k < 3; k++) c -= (double)cam->R[k * 3 + i] * cam->t[k];
        f->campos[i] = (float)c;
        f->background[i] = opts->background[i];
    }
    f->sh_degree = opts->sh_degree > 3 ? 3 : opts->sh_degree;
    f->tiles_x = splat__div_up(cam->width, SPLAT_TILE);
    f->tiles_y = splat__div_up(cam->height, SPLAT_TILE);
    f->cap = opts->max_gaussians_per_tile;
    f->n_gaussians = n_gaussians;
}

void splat__render_set_frame(splat_cmd *c, splat_render_bufs *b, const splat_frame *f)
{
    splat__cmd_update(c, SPLAT_VIEW(b->frame), f, sizeof *f);
}

/* ---------------------------------------------------------------- recording */

static splat_render_push push_of(const splat_render_bufs *b)
{
    uint32_t tiles = b->max_tiles_x * b->max_tiles_y;
    return (splat_render_push){
        .capacity = b->capacity,
        .isect_capacity = b->isect_capacity,
        .sort_bits = 32 + bits_for(tiles + 1),
        .dummy_tile = tiles,
    };
}

void splat__render_fwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n)
{
    SPLAT_ASSERT(n <= b->capacity && n <= scene->capacity);
    splat_render_push pc = push_of(b);
    splat__cmd_fill(c, SPLAT_VIEW(b->counters), 0);
    splat__cmd_fill(c, SPLAT_VIEW(b->ranges), 0);
    splat__cmd_barrier(c);

    splat_view proj_views[] = {SPLAT_VIEW(b->frame), SPLAT_VIEW(scene->means), SPLAT_VIEW(scene->log_scales),
                               SPLAT_VIEW(scene->quats), SPLAT_VIEW(scene->opacities), SPLAT_VIEW(scene->sh),
                               SPLAT_VIEW(b->proj), SPLAT_VIEW(b->radii), SPLAT_VIEW(b->tiles), SPLAT_VIEW(b->counters)};
    splat__cmd_dispatch_1d(c, scene->sh_half ? &r->project_fwd_h : &r->project_fwd, proj_views, SPLAT_COUNTOF(proj_views),
                           NULL, 0, n);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "project_fwd");

    splat__scan_record(c, &r->sorter, &(splat_scan_args){
        .in = SPLAT_VIEW(b->tiles),
        .out = SPLAT_VIEW(b->offsets),
        .max_count = n,
        .total = SPLAT_VIEW(b->scan_total),
        .scratch = SPLAT_VIEW(b->scan_scratch),
    });
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "scan");

    splat_view setup_views[] = {SPLAT_VIEW(b->counters), SPLAT_VIEW(b->scan_total), SPLAT_VIEW(b->sort_count)};
    splat__cmd_dispatch(c, &r->isect_setup, setup_views, 3, &pc, sizeof pc, 1, 1, 1);
    splat__cmd_barrier(c);
    splat_view isect_views[] = {SPLAT_VIEW(b->frame), SPLAT_VIEW(b->proj), SPLAT_VIEW(b->radii),
                                SPLAT_VIEW(b->offsets), SPLAT_VIEW(b->tiles), SPLAT_VIEW(b->keys_lo),
                                SPLAT_VIEW(b->keys_hi), SPLAT_VIEW(b->vals), SPLAT_VIEW(b->gauss_of_emit),
                                SPLAT_VIEW(b->partial), SPLAT_VIEW(b->counters)};
    splat__cmd_dispatch_1d(c, &r->isect_fwd, isect_views, SPLAT_COUNTOF(isect_views), &pc, sizeof pc, n);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "isect_fwd");

    splat__sort_record(c, &r->sorter, &(splat_sort_args){
        .key_words = 2,
        .bits = pc.sort_bits,
        .max_count = b->isect_capacity,
        .count = SPLAT_VIEW(b->sort_count),
        .keys = SPLAT_VIEW(b->keys_lo),
        .keys_hi = SPLAT_VIEW(b->keys_hi),
        .values = SPLAT_VIEW(b->vals),
        .scratch = SPLAT_VIEW(b->sort_scratch),
    });
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "sort");

    splat_view range_views[] = {SPLAT_VIEW(b->counters), SPLAT_VIEW(b->keys_hi), SPLAT_VIEW(b->ranges)};
    splat__cmd_dispatch_indirect(c, &r->ranges_fwd, range_views, 3, NULL, 0,
                                 SPLAT_VIEW_AT(b->counters, offsetof(splat_counters, isect_groups), 12));
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "ranges_fwd");

    splat_view raster_views[] = {SPLAT_VIEW(b->frame),    SPLAT_VIEW(b->ranges),   SPLAT_VIEW(b->vals),
                                 SPLAT_VIEW(b->proj),     SPLAT_VIEW(b->out_rgbt), SPLAT_VIEW(b->out_last),
                                 SPLAT_VIEW(b->out_depth), SPLAT_VIEW(b->gauss_of_emit)};
    splat__cmd_dispatch(c, &r->rasterize_fwd, raster_views, SPLAT_COUNTOF(raster_views), NULL, 0, b->max_tiles_x,
                        b->max_tiles_y, 1);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "rasterize_fwd");
    splat__cmd_copy(c, SPLAT_VIEW(b->counters), SPLAT_VIEW(b->readback));
}

void splat__render_bwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n, const splat_scene_gpu *grads, bool stats)
{
    SPLAT_ASSERT(n <= grads->capacity);
    splat_render_push pc = push_of(b);
    splat_view raster_views[] = {SPLAT_VIEW(b->frame),    SPLAT_VIEW(b->ranges),   SPLAT_VIEW(b->vals),
                                 SPLAT_VIEW(b->proj),     SPLAT_VIEW(b->out_rgbt), SPLAT_VIEW(b->out_last),
                                 SPLAT_VIEW(b->grad_img), SPLAT_VIEW(b->gauss_of_emit), SPLAT_VIEW(b->partial)};
    splat__cmd_dispatch(c, &r->rasterize_bwd, raster_views, SPLAT_COUNTOF(raster_views), NULL, 0, b->max_tiles_x,
                        b->max_tiles_y, 1);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "rasterize_bwd");
    splat_view proj_views[] = {SPLAT_VIEW(b->frame), SPLAT_VIEW(scene->means), SPLAT_VIEW(scene->log_scales),
                               SPLAT_VIEW(scene->quats), SPLAT_VIEW(scene->opacities), SPLAT_VIEW(scene->sh),
                               SPLAT_VIEW(b->radii), SPLAT_VIEW(b->partial), SPLAT_VIEW(grads->means),
                               SPLAT_VIEW(grads->log_scales), SPLAT_VIEW(grads->quats), SPLAT_VIEW(grads->opacities),
                               SPLAT_VIEW(grads->sh), SPLAT_VIEW(b->stats), SPLAT_VIEW(b->offsets),
                               SPLAT_VIEW(b->tiles), SPLAT_VIEW(b->gate), SPLAT_VIEW(b->debug), SPLAT_VIEW(b->proj)};
    /* half-float SH is for rendering; training (the statistics) keeps float parameters */
    SPLAT_ASSERT(!(stats && scene->sh_half));
    const splat_pipe *pb = scene->sh_half ? &r->project_bwd_h : stats ? &r->project_bwd_stats : &r->project_bwd;
    splat__cmd_dispatch_1d(c, pb, proj_views, SPLAT_COUNTOF(proj_views), &pc, sizeof pc, n);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "project_bwd");
}

/* ----------------------------------------------------------------- checking */

uint32_t splat__render_debug(splat_gpu *g, splat_render_bufs *b, char *msg, size_t size)
{
    struct {
        uint32_t count, index, entries, pad;
        float v[28];
    } d;
    if (splat__buf_download(g, &b->debug, 0, &d, sizeof d, NULL) != SPLAT_OK || d.count == 0) return 0;
    snprintf(msg, size,
             "%u non-finite gradient(s) withheld; first Gaussian %u over %u tiles: 2D gradients (%g %g | %g %g %g | %g | %g "
             "%g %g), mean2d (%g %g) depth %g opacity %g conic (%g %g %g) tau %g radii (%g %g), camera-space (%g %g %g), "
             "scale0 %g, 1/|q| %g",
             d.count, d.index, d.entries, d.v[0], d.v[1], d.v[2], d.v[3], d.v[4], d.v[5], d.v[6], d.v[7], d.v[8], d.v[9],
             d.v[10], d.v[11], d.v[12], d.v[13], d.v[14], d.v[15], d.v[16], d.v[17], d.v[18], d.v[23], d.v[24], d.v[25],
             d.v[26], d.v[27]);
    return d.count;
}

splat_status splat__render_check(splat_gpu *g, splat_render_bufs *b, bool *overflow, uint32_t *needed, splat_error *err)
{
    splat_counters k;
    splat_status st = splat__buf_download(g, &b->readback, 0, &k, sizeof k, err);
    if (st != SPLAT_OK) return st;
    *overflow = k.overflow != 0;
    *needed = k.n_isect;
    if (k.nonfinite)
        return splat__fail(err, SPLAT_ERR_NONFINITE, "render: the scene has NaN or Inf parameters (%u Gaussians)",
                           b->capacity);
    return SPLAT_OK;
}

splat_status splat__render_image(splat_stream *s, const splat_renderer *r, const splat_scene_gpu *scene,
                                 splat_render_bufs *b, const splat_camera *cam, const splat_render_opts *opts,
                                 splat_error *err)
{
    if (cam->width == 0 || cam->height == 0 || cam->width > b->max_w || cam->height > b->max_h)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "render: camera of %ux%u for buffers of at most %ux%u", cam->width,
                           cam->height, b->max_w, b->max_h);
    splat_frame f;
    splat__frame_make(&f, cam, opts, scene->count);
    for (int attempt = 0; attempt < 4; attempt++) {
        splat_cmd *c = splat__stream_cmd(s);
        splat__render_set_frame(c, b, &f);
        splat__cmd_barrier(c);
        splat__render_fwd(c, r, scene, b, scene->count);
        splat_status st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
        bool overflow;
        uint32_t needed;
        if (st == SPLAT_OK) st = splat__render_check(s->gpu, b, &overflow, &needed, err);
        if (st != SPLAT_OK) return st;
        if (!overflow) return SPLAT_OK;
        st = splat__render_bufs_grow_isect(s->gpu, r, b, needed, err);
        if (st != SPLAT_OK) return st;
    }
    return splat__fail(err, SPLAT_ERR_DEVICE, "render: intersection count kept growing");
}
