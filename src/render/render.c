/* render: the forward and the backward in pipeline order (each stage in its own file), the check
 * of a finished render, and the overflow-retry path. */
#include <stdio.h>

#include "render/render.h"

void splat__render_fwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n, uint32_t flags)
{
    SPLAT_ASSERT(n <= b->capacity && n <= scene->capacity);
    splat_render_push pc = splat__render_push(b);
    splat__cmd_fill(c, SPLAT_VIEW(b->counters), 0);
    splat__cmd_fill(c, SPLAT_VIEW(b->ranges), 0);
    splat__cmd_barrier(c);

    splat__project_fwd_record(c, r, scene, b, n, flags);
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

    splat__isect_record(c, r, b, n);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "isect_fwd");

    /* By tile alone, the depth bits carried along as the second key word; tile_sort then orders
     * each tile's run by (depth bits, value). The values rise with the Gaussian (the emission
     * index in training, the Gaussian itself in forward-only renders), so that is the order of
     * the stable sort by the full (tile, depth) key, in two radix passes instead of six. */
    splat__sort_record(c, &r->sorter, &(splat_sort_args){
        .key_words = 2,
        .bits = pc.tile_bits,
        .max_count = b->isect_capacity,
        .count = SPLAT_VIEW(b->sort_count),
        .keys = SPLAT_VIEW(b->keys_hi),
        .keys_hi = SPLAT_VIEW(b->keys_lo),
        .values = SPLAT_VIEW(b->vals),
        .scratch = SPLAT_VIEW(b->sort_scratch),
    });
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "sort");

    splat__ranges_record(c, r, b);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "ranges_fwd");
    splat__tile_sort_record(c, r, b);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "tile_sort");

    splat__rasterize_fwd_record(c, r, b);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "rasterize_fwd");
    splat__cmd_copy(c, SPLAT_VIEW(b->counters), SPLAT_VIEW(b->readback));
}

void splat__render_bwd(splat_cmd *c, const splat_renderer *r, const splat_scene_gpu *scene, splat_render_bufs *b,
                       uint32_t n, const splat_scene_gpu *grads, uint32_t flags)
{
    /* forward-only buffers hold stubs where the backward reads and writes */
    SPLAT_ASSERT(!b->fwd_only);
    splat__rasterize_bwd_record(c, r, b);
    splat__cmd_barrier(c);
    splat__cmd_mark(c, "rasterize_bwd");
    splat__project_bwd_record(c, r, scene, b, n, grads, flags);
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

splat_status splat__render_run(splat_stream *s, const splat_renderer *r, splat_render_bufs *b,
                               const splat_render_job *job, splat_error *err)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        splat_status st;
        if (job->submit) {
            st = job->submit(s, job->user, err);
        } else {
            job->record(splat__stream_cmd(s), job->user);
            st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
        }
        bool overflow;
        uint32_t needed;
        if (st == SPLAT_OK) st = splat__render_check(s->gpu, b, &overflow, &needed, err);
        if (st != SPLAT_OK) return st;
        if (!overflow) return SPLAT_OK;
        st = splat__render_bufs_grow_isect(s->gpu, r, b, needed, err);
        if (st == SPLAT_OK && job->regrown) st = job->regrown(job->user, err);
        if (st != SPLAT_OK) return st;
    }
    return splat__fail(err, SPLAT_ERR_DEVICE, "render: intersection count kept growing");
}

typedef struct image_job {
    const splat_renderer *r;
    const splat_scene_gpu *scene;
    splat_render_bufs *b;
    const splat_frame *f;
    splat_buf *copy;
    uint64_t copy_bytes;
} image_job;

/* The frame comes from `frame_host` (replayed) or is written into the commands (profiled). */
static void record_image(splat_cmd *c, const image_job *j, bool replayed)
{
    if (replayed) splat__cmd_copy(c, SPLAT_VIEW(j->b->frame_host), SPLAT_VIEW(j->b->frame));
    else splat__render_set_frame(c, j->b, j->f);
    splat__cmd_barrier(c);
    splat__render_fwd(c, j->r, j->scene, j->b, j->scene->count, 0);
    if (j->copy) splat__cmd_copy(c, SPLAT_VIEW_AT(j->b->out_rgbt, 0, j->copy_bytes), SPLAT_VIEW_AT(*j->copy, 0, j->copy_bytes));
}

/* Everything the recording bound, so that it is recorded again when any of it changes. */
static struct splat_image_key image_key(const image_job *j)
{
    struct splat_image_key k = {.renderer = j->r->id, .isect = j->b->keys_lo.id, .count = j->scene->count,
                                .sh_half = j->scene->sh_half};
    for (uint32_t g = 0; g < SPLAT_GROUP_COUNT; g++) k.scene[g] = j->scene->group[g].id;
    if (j->copy) k.copy = j->copy->id, k.copy_bytes = j->copy_bytes;
    return k;
}

/* One submission of the image and the wait for it. Recording the render's few dozen commands
 * cost the host 0.05 ms an image on the H100 (bonsai's test views, 0.8 ms in all), so the
 * recording is kept and replayed, the camera written where its first command copies it from;
 * every call waits (polling the first 2 ms: a blocking wait woke 0.02 ms late), so the host never
 * writes the camera while a replay still reads it. A profiled stream (benchmarks' timestamps)
 * records afresh. */
static splat_status image_submit(splat_stream *s, void *user, splat_error *err)
{
    const image_job *j = user;
    if (s->cmd.prof) {
        record_image(splat__stream_cmd(s), j, false);
        return splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    }
    splat_gpu *g = s->gpu;
    splat_render_bufs *b = j->b;
    struct splat_image_key key = image_key(j);
    if (!b->image_rec.ended || memcmp(&key, &b->image_key, sizeof key) != 0) {
        splat__rec_free(g, &b->image_rec);
        splat_status st = splat__rec_begin(g, &b->image_rec, err);
        if (st != SPLAT_OK) return st;
        record_image(&b->image_rec.cmd, j, true);
        st = splat__rec_end(&b->image_rec, err);
        if (st != SPLAT_OK) {
            splat__rec_free(g, &b->image_rec);
            return st;
        }
        b->image_key = key;
    }
    memcpy(b->frame_host.map, j->f, sizeof *j->f);
    splat_status st = splat__stream_replay(s, &b->image_rec, NULL, err);
    return st != SPLAT_OK ? (splat__stream_wait(s, 0, NULL), st) : splat__stream_wait_polled(s, 0.002, err);
}

splat_status splat__render_image_copy(splat_stream *s, const splat_renderer *r, const splat_scene_gpu *scene,
                                      splat_render_bufs *b, const splat_camera *cam, const splat_render_desc *desc,
                                      splat_buf *copy, splat_error *err)
{
    if (cam->width == 0 || cam->height == 0 || cam->width > b->max_w || cam->height > b->max_h)
        return splat__fail(err, SPLAT_ERR_INVALID_ARG, "render: camera of %ux%u for buffers of at most %ux%u", cam->width,
                           cam->height, b->max_w, b->max_h);
    uint64_t bytes = (uint64_t)cam->width * cam->height * 16;
    SPLAT_ASSERT(!copy || copy->size >= bytes);
    splat_frame f;
    splat__frame_make(&f, cam, desc, scene->count);
    image_job j = {r, scene, b, &f, copy, bytes};
    return splat__render_run(s, r, b, &(splat_render_job){.submit = image_submit, .user = &j}, err);
}

splat_status splat__render_image(splat_stream *s, const splat_renderer *r, const splat_scene_gpu *scene,
                                 splat_render_bufs *b, const splat_camera *cam, const splat_render_desc *desc,
                                 splat_error *err)
{
    return splat__render_image_copy(s, r, scene, b, cam, desc, NULL, err);
}
