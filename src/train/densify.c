/* Densification and opacity reset (docs/TRAIN.md): the decisions, scans and moves run on the
 * GPU; the host waits once per refine, to learn the new count and size the new arrays. */
#include <stdio.h>

#include "train/train.h"

void splat__densify_bufs_free(splat_gpu *g, splat_densify_bufs *d)
{
    splat_buf *all[] = {&d->keep,      &d->clone,     &d->split,     &d->off_keep, &d->off_clone, &d->off_split,
                        &d->tot_keep,  &d->tot_clone, &d->tot_split, &d->totals,   &d->info,      &d->scan_scratch,
                        &d->readback};
    for (size_t k = 0; k < SPLAT_COUNTOF(all); k++) splat__buf_free(g, all[k]);
    d->capacity = 0;
}

static splat_status bufs_ensure(splat_gpu *g, const splat_sorter *sorter, splat_densify_bufs *d, uint32_t capacity,
                                splat_error *err)
{
    if (d->capacity >= capacity && d->keep.buffer) return SPLAT_OK;
    splat__densify_bufs_free(g, d);
    uint64_t n = (uint64_t)capacity * 5 / 4 + 1024;
    struct {
        splat_buf *buf;
        const char *name;
        uint64_t size;
        splat_mem kind;
    } parts[] = {
        {&d->keep, "densify.keep", n * 4, SPLAT_MEM_DEVICE},
        {&d->clone, "densify.clone", n * 4, SPLAT_MEM_DEVICE},
        {&d->split, "densify.split", n * 4, SPLAT_MEM_DEVICE},
        {&d->off_keep, "densify.off_keep", n * 4, SPLAT_MEM_DEVICE},
        {&d->off_clone, "densify.off_clone", n * 4, SPLAT_MEM_DEVICE},
        {&d->off_split, "densify.off_split", n * 4, SPLAT_MEM_DEVICE},
        {&d->tot_keep, "densify.tot_keep", 4, SPLAT_MEM_DEVICE},
        {&d->tot_clone, "densify.tot_clone", 4, SPLAT_MEM_DEVICE},
        {&d->tot_split, "densify.tot_split", 4, SPLAT_MEM_DEVICE},
        {&d->totals, "densify.totals", 12, SPLAT_MEM_DEVICE},
        {&d->info, "densify.info", 8, SPLAT_MEM_DEVICE},
        {&d->scan_scratch, "densify.scan_scratch", splat__scan_scratch_bound(sorter, (uint32_t)n),
         SPLAT_MEM_DEVICE},
        {&d->readback, "densify.readback", 20, SPLAT_MEM_READBACK},
    };
    splat_status st = SPLAT_OK;
    for (size_t k = 0; k < SPLAT_COUNTOF(parts) && st == SPLAT_OK; k++)
        st = splat__buf_init(g, parts[k].buf, parts[k].name, parts[k].size, parts[k].kind, err);
    if (st == SPLAT_OK) d->capacity = (uint32_t)n;
    return st;
}

static void record_scan(splat_cmd *c, const splat_sorter *sorter, splat_densify_bufs *d, uint32_t n, splat_buf *in,
                        splat_buf *out, splat_buf *total)
{
    splat__scan_record(c, sorter, &(splat_scan_args){
        .in = SPLAT_VIEW(*in),
        .out = SPLAT_VIEW(*out),
        .max_count = n,
        .total = SPLAT_VIEW(*total),
        .scratch = SPLAT_VIEW(d->scan_scratch),
    });
}

splat_status splat__densify_run(splat_densify_job *job, splat_densify_result *res, splat_error *err)
{
    splat_gpu *g = job->gpu;
    splat_stream *s = job->stream;
    splat_densify_bufs *d = job->bufs;
    uint32_t n = job->count;
    memset(res, 0, sizeof *res);
    splat_status st = bufs_ensure(g, job->sorter, d, n, err);
    if (st != SPLAT_OK) return st;
    splat_train_push pc = {.n = n, .seed = job->seed, .scene_scale = job->scene_scale, .step = job->step,
                           .flags = job->prune_large_after};

    /* 1: decisions and their scans; the host learns the new count */
    splat_cmd *c = splat__stream_cmd(s);
    splat__cmd_fill(c, SPLAT_VIEW(d->info), 0);
    splat__cmd_barrier(c);
    splat_scene_gpu *p = job->params, *m = job->moments;
    splat_view mark[] = {SPLAT_VIEW(p->log_scales), SPLAT_VIEW(p->opacities), SPLAT_VIEW(*job->stats),
                         SPLAT_VIEW(d->keep), SPLAT_VIEW(d->clone), SPLAT_VIEW(d->split), SPLAT_VIEW(d->info)};
    splat__cmd_dispatch_1d(c, &job->pipes->densify_mark, mark, 7, &pc, sizeof pc, n);
    splat__cmd_barrier(c);
    record_scan(c, job->sorter, d, n, &d->keep, &d->off_keep, &d->tot_keep);
    record_scan(c, job->sorter, d, n, &d->clone, &d->off_clone, &d->tot_clone);
    record_scan(c, job->sorter, d, n, &d->split, &d->off_split, &d->tot_split);
    splat__cmd_barrier(c);
    splat__cmd_copy(c, SPLAT_VIEW(d->tot_keep), SPLAT_VIEW_AT(d->totals, 0, 4));
    splat__cmd_copy(c, SPLAT_VIEW(d->tot_clone), SPLAT_VIEW_AT(d->totals, 4, 4));
    splat__cmd_copy(c, SPLAT_VIEW(d->tot_split), SPLAT_VIEW_AT(d->totals, 8, 4));
    splat__cmd_barrier(c);
    splat__cmd_copy(c, SPLAT_VIEW(d->totals), SPLAT_VIEW_AT(d->readback, 0, 12));
    splat__cmd_copy(c, SPLAT_VIEW(d->info), SPLAT_VIEW_AT(d->readback, 12, 8));
    st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    if (st != SPLAT_OK) return st;
    uint32_t r[5];
    memcpy(r, d->readback.map, sizeof r);
    uint64_t new_count = (uint64_t)r[0] + r[1] + r[2];
    if (new_count > UINT32_MAX / 4)
        return splat__fail(err, SPLAT_ERR_LIMIT, "densification at step %u would make %llu Gaussians", job->step,
                           (unsigned long long)new_count);
    res->count = (uint32_t)new_count;
    res->clones = r[3];
    res->splits = r[4];
    res->pruned = (uint32_t)((uint64_t)n + r[3] + r[4] - new_count);

    /* 2: the new arrays, written in the order of docs/TRAIN.md */
    splat_scene_gpu np, nm;
    uint32_t cap = new_count ? (uint32_t)new_count : 1;
    st = splat__scene_gpu_init(g, &np, "params", cap, err);
    if (st != SPLAT_OK) return st;
    st = splat__scene_gpu_init(g, &nm, "adam", cap * 2, err);
    if (st != SPLAT_OK) {
        splat__scene_gpu_free(g, &np);
        return st;
    }
    c = splat__stream_cmd(s);
    splat_view apply[] = {
        SPLAT_VIEW(d->totals),     SPLAT_VIEW(d->off_keep),   SPLAT_VIEW(d->off_clone),  SPLAT_VIEW(d->off_split),
        SPLAT_VIEW(d->keep),       SPLAT_VIEW(d->clone),      SPLAT_VIEW(d->split),      SPLAT_VIEW(p->means),
        SPLAT_VIEW(p->log_scales), SPLAT_VIEW(p->quats),      SPLAT_VIEW(p->opacities),  SPLAT_VIEW(p->sh),
        SPLAT_VIEW(m->means),      SPLAT_VIEW(m->log_scales), SPLAT_VIEW(m->quats),      SPLAT_VIEW(m->opacities),
        SPLAT_VIEW(m->sh),         SPLAT_VIEW(np.means),      SPLAT_VIEW(np.log_scales), SPLAT_VIEW(np.quats),
        SPLAT_VIEW(np.opacities),  SPLAT_VIEW(np.sh),         SPLAT_VIEW(nm.means),      SPLAT_VIEW(nm.log_scales),
        SPLAT_VIEW(nm.quats),      SPLAT_VIEW(nm.opacities),  SPLAT_VIEW(nm.sh)};
    splat__cmd_dispatch_1d(c, &job->pipes->densify_apply, apply, SPLAT_COUNTOF(apply), &pc, sizeof pc, n);
    st = splat__stream_sync(s, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    if (st != SPLAT_OK) {
        splat__scene_gpu_free(g, &np);
        splat__scene_gpu_free(g, &nm);
        return st;
    }
    splat__scene_gpu_free(g, p);
    splat__scene_gpu_free(g, m);
    *p = np;
    *m = nm;
    p->count = res->count;
    return SPLAT_OK;
}

splat_status splat__densify(splat_trainer *t, uint32_t step, splat_error *err)
{
    splat_gpu *g = t->g;
    splat_densify_job job = {
        .gpu = g, .stream = &t->ctx->stream, .sorter = &t->ctx->renderer.sorter, .pipes = &t->pipes, .bufs = &t->dens,
        .params = &t->params, .moments = &t->moments, .stats = &t->rb.stats, .count = t->count, .step = step,
        .seed = (uint32_t)t->desc.seed ^ step, .scene_scale = (float)t->scene_scale, .prune_large_after = t->reset_every,
    };
    splat_densify_result res;
    splat_status st = splat__densify_run(&job, &res, err);
    if (st != SPLAT_OK) return st;
    t->count = res.count;
    t->n_densify++;
    uint32_t cap = res.count ? res.count : 1;

    /* per-Gaussian arrays that only need room (their contents are rebuilt every step) */
    if (t->grads.capacity < cap) {
        splat__scene_gpu_free(g, &t->grads);
        st = splat__scene_gpu_init(g, &t->grads, "grads", cap + cap / 4, err);
    }
    if (st == SPLAT_OK && t->rb.capacity < cap) {
        uint32_t isect = t->rb.isect_capacity;
        splat__render_bufs_free(g, &t->rb);
        st = splat__render_bufs_init(g, &t->ctx->renderer, &t->rb, cap + cap / 4, isect, t->max_w, t->max_h, err);
    }
    if (st != SPLAT_OK) return st;
    /* statistics start over after every refine; the gate is open (nothing was gated) */
    splat_cmd *c = splat__stream_cmd(&t->ctx->stream);
    splat__cmd_fill(c, SPLAT_VIEW(t->rb.stats), 0);
    splat__cmd_fill(c, SPLAT_VIEW(t->rb.gate), 0);
    st = splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT_AND_WAIT, err);
    if (st == SPLAT_OK) st = splat__train_rerecord(t, err);
    return st;
}

splat_status splat__opacity_reset(splat_trainer *t, splat_error *err)
{
    splat_train_push pc = {.n = t->count};
    splat_cmd *c = splat__stream_cmd(&t->ctx->stream);
    splat_view v[] = {SPLAT_VIEW(t->params.opacities), SPLAT_VIEW(t->moments.opacities)};
    splat__cmd_dispatch_1d(c, &t->pipes.opacity_reset, v, 2, &pc, sizeof pc, t->count);
    splat__cmd_barrier(c);
    return splat__stream_sync(&t->ctx->stream, SPLAT_SYNC_COMMIT, err);
}
